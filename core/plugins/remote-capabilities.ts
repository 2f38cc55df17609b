import { CapabilityError, isKernelError } from '../errors.js';
import type { ActionCall } from '../plugin-api.js';
import { mayRead, type ReadableNotebook } from '../gate/read-scope.js';
import type { CapabilityOffer } from './plugin-ipc.js';

/**
 * Withheld from a plugin in a process of its own whatever its manifest says: the workspace object is
 * its paths, and a path is a way to the workspace that no effect declaration governs.
 */
const WITHHELD: ReadonlyMap<string, string> = new Map([
  ['core.workspace', "the workspace's paths are not given to a plugin that runs in a process of its own; mark it trusted in quire.json to run it in the kernel's process"],
]);

/**
 * Also withheld: capabilities whose methods change the notes, snapshots, skills, sessions or what the
 * gate decides (undo a turn, take snapshots, write skills or to-dos). Their writes are no effect the
 * plugin's actions declare, so the gate, the confirmation and the audit would never see them.
 */
const WITHHELD_PREFIXES = ['agent.', 'gate.'];
const WITHHELD_WRITERS = new Set(['skills.writes', 'core.session-todos']);
/**
 * Methods of an offered capability that write, or that take a function: the others of the capability
 * stay offered. A function cannot cross to the kernel (what arrives is data), and a listener registered
 * outlives the call that registered it: `onBeforeChange(1)` left a number among the listeners, and
 * every later change of a document failed ("listener is not a function") until a restart.
 */
const WITHHELD_METHODS: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  // beforeFileChange keeps a history version of a document: a write the calling action did not declare.
  ['blocks.index', new Set(['beforeFileChange', 'onBeforeChange', 'onIndexed', 'onNotebookChange', 'withWritesPaused'])],
]);

/**
 * Answers narrowed to what the call's caller may read (the scope answered in core/gate/read-scope.ts):
 * `blocks.index`'s `notebooks()` named every notebook with its settings, private ones and ones closed to
 * the agent too, to a plugin answering a reader or the agent. A plugin in the kernel's process is trusted.
 */
const SCOPED_ANSWERS: ReadonlyMap<string, ReadonlyMap<string, (answer: unknown, call: ActionCall) => unknown>> = new Map([
  ['blocks.index', new Map([['notebooks', readableOnly]])],
]);

function readableOnly(answer: unknown, call: ActionCall): unknown {
  if (!(answer instanceof Map)) return answer;
  return new Map([...(answer as Map<string, ReadableNotebook>)].filter(([id, conf]) => mayRead(call, id, conf)));
}

function withheldReason(name: string): string | undefined {
  const fixed = WITHHELD.get(name);
  if (fixed !== undefined) return fixed;
  if (WITHHELD_WRITERS.has(name) || WITHHELD_PREFIXES.some((prefix) => name.startsWith(prefix))) {
    return `'${name}' changes what no effect of the plugin's actions declares, so it is not given to a plugin that runs in a process of its own; mark it trusted in quire.json to run it in the kernel's process`;
  }
  return undefined;
}

/** Whether an argument stands for an action call (it carries a principal): the kernel's own call takes its place. */
function isCallShaped(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.hasOwn(value, 'principal');
}

interface Service {
  value: object;
  methods: ReadonlySet<string>;
}

/**
 * What a plugin running out of process gets for each capability its manifest `requires`: plain data is
 * copied; an object with methods is offered by method name, each call answered here in the kernel (in
 * the scope of the call that made it); what cannot cross, or is withheld, is refused with why.
 */
export class CapabilityBroker {
  private services = new Map<string, Service>();

  constructor(private readonly requires: readonly string[], private readonly resolve: (name: string) => unknown) {}

  /** Resolved again at each start of the process: a capability may have been provided anew meanwhile. */
  offers(): CapabilityOffer[] {
    const services = new Map<string, Service>();
    const offers = this.requires.map((name): CapabilityOffer => {
      const withheld = withheldReason(name);
      if (withheld !== undefined) return { name, kind: 'refused', message: withheld };
      let value: unknown;
      try {
        value = this.resolve(name);
      } catch (error) {
        return { name, kind: 'refused', message: isKernelError(error) ? error.message : `'${name}' is not available` };
      }
      if (isPlainData(value)) return { name, kind: 'value', value: structuredClone(value) };
      const held = WITHHELD_METHODS.get(name);
      const methods = typeof value === 'object' && value !== null ? methodNames(value).filter((method) => !held?.has(method)) : [];
      if (methods.length === 0) return { name, kind: 'refused', message: `'${name}' cannot be sent to a plugin that runs in a process of its own` };
      services.set(name, { value: value as object, methods: new Set(methods) });
      return { name, kind: 'methods', methods };
    });
    this.services = services;
    return offers;
  }

  /**
   * Only a method offered, by its name in a Map: never a property the plugin names on an object. Only
   * for one of the plugin's calls still running (`call`, the kernel's own record of it): an argument
   * that stands for a call (one with a `principal`) is replaced by it, so a plugin cannot claim to act
   * for someone else, and a method is never run after its call ended or outside any call.
   */
  async invoke(name: string, method: string, args: unknown[], call: ActionCall | undefined): Promise<unknown> {
    const service = this.services.get(name);
    if (!service?.methods.has(method)) throw new CapabilityError(`'${name}' offers no method '${method}'`, { details: { capability: name, method } });
    const fn = findMethod(service.value, method);
    if (!fn) throw new CapabilityError(`'${name}' offers no method '${method}'`, { details: { capability: name, method } });
    if (!call) {
      throw new CapabilityError(`'${name}.${method}' is answered only during one of the plugin's action calls, and none is running (outside one, or after it ended)`, { details: { capability: name, method } });
    }
    const given = Array.isArray(args) ? args : [];
    const answer: unknown = await Reflect.apply(fn, service.value, given.map((arg) => (isCallShaped(arg) ? call : arg)));
    const scoped = SCOPED_ANSWERS.get(name)?.get(method);
    return scoped ? scoped(answer, call) : answer;
  }
}

function isPlainData(value: unknown, depth = 0): boolean {
  if (typeof value === 'function' || typeof value === 'symbol') return false;
  if (value === null || typeof value !== 'object') return true;
  if (depth > 32) return false;
  if (value instanceof Date) return true;
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== Array.prototype && proto !== null) return false;
  return Object.values(value).every((inner) => isPlainData(inner, depth + 1));
}

/** Function-valued properties of the object and its prototypes, read from descriptors (no getter runs). */
function methodNames(value: object): string[] {
  const names = new Set<string>();
  for (let layer: object | null = value; layer && layer !== Object.prototype; layer = Object.getPrototypeOf(layer) as object | null) {
    for (const key of Object.getOwnPropertyNames(layer)) {
      if (key !== 'constructor' && typeof Object.getOwnPropertyDescriptor(layer, key)?.value === 'function') names.add(key);
    }
  }
  return [...names];
}

function findMethod(value: object, method: string): ((...args: unknown[]) => unknown) | undefined {
  for (let layer: object | null = value; layer && layer !== Object.prototype; layer = Object.getPrototypeOf(layer) as object | null) {
    const fn: unknown = Object.getOwnPropertyDescriptor(layer, method)?.value;
    if (typeof fn === 'function') return fn as (...args: unknown[]) => unknown;
  }
  return undefined;
}
