import { CapabilityError, isKernelError } from '../errors.js';
import type { CapabilityOffer } from './plugin-ipc.js';

/**
 * Withheld from a plugin in a process of its own whatever its manifest says: the workspace object is
 * its paths, and a path is a way to the workspace that no effect declaration governs.
 */
const WITHHELD: ReadonlyMap<string, string> = new Map([
  ['core.workspace', "the workspace's paths are not given to a plugin that runs in a process of its own; mark it trusted in quire.json to run it in the kernel's process"],
]);

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
      const withheld = WITHHELD.get(name);
      if (withheld !== undefined) return { name, kind: 'refused', message: withheld };
      let value: unknown;
      try {
        value = this.resolve(name);
      } catch (error) {
        return { name, kind: 'refused', message: isKernelError(error) ? error.message : `'${name}' is not available` };
      }
      if (isPlainData(value)) return { name, kind: 'value', value: structuredClone(value) };
      const methods = typeof value === 'object' && value !== null ? methodNames(value) : [];
      if (methods.length === 0) return { name, kind: 'refused', message: `'${name}' cannot be sent to a plugin that runs in a process of its own` };
      services.set(name, { value: value as object, methods: new Set(methods) });
      return { name, kind: 'methods', methods };
    });
    this.services = services;
    return offers;
  }

  /** Only a method offered, by its name in a Map: never a property the plugin names on an object. */
  async invoke(name: string, method: string, args: unknown[]): Promise<unknown> {
    const service = this.services.get(name);
    if (!service?.methods.has(method)) throw new CapabilityError(`'${name}' offers no method '${method}'`, { details: { capability: name, method } });
    const fn = findMethod(service.value, method);
    if (!fn) throw new CapabilityError(`'${name}' offers no method '${method}'`, { details: { capability: name, method } });
    return Reflect.apply(fn, service.value, Array.isArray(args) ? args : []);
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
