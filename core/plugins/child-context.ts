import { CapabilityError, KernelError, type ErrorCode } from '../errors.js';
import type { LogFields, Logger, LogLevel } from '../log.js';
import type { ActionCall, PluginContext, Principal, ProgressUpdate, StopReason } from '../plugin-api.js';
import { tokenName, type Token } from '../tokens.js';
import type { ActivateRequest, ChildMessage, WireError } from './plugin-ipc.js';

/**
 * The plugin's side of the process boundary: a PluginContext and ActionCalls that behave as the kernel's
 * do in-process, built only from what the kernel sent and answering only through messages.
 */

export type Send = (message: ChildMessage) => void;

/** Calls a capability's method in the kernel; resolves with its answer. */
export type CapabilityCaller = (name: string, method: string, args: unknown[]) => Promise<unknown>;

export function createChildLogger(send: Send, tag?: string): Logger {
  const emit = (level: LogLevel) => (message: string, fields?: LogFields): void => {
    const all = fields || tag ? { ...(tag ? { scope: tag } : {}), ...fields } : undefined;
    send({ type: 'log', level, message: String(message), ...(all ? { fields: cloneable(all) } : {}) });
  };
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error'), child: (child) => createChildLogger(send, tag ? `${tag}:${child}` : child) };
}

/** Log fields as the kernel's logger would write them: what JSON keeps (a function in a field must not make logging throw). */
function cloneable(fields: LogFields): LogFields {
  try {
    return structuredClone(fields);
  } catch {
    try {
      return JSON.parse(JSON.stringify(fields)) as LogFields;
    } catch {
      return { unserialisable: true };
    }
  }
}

export function createChildContext(request: ActivateRequest, send: Send, callCapability: CapabilityCaller, disposers: (() => unknown)[]): PluginContext {
  const id = request.pluginId;
  const requires = new Set(request.requires);
  const provides = new Set(request.provides);
  const offered = new Map<string, unknown>();
  const refused = new Map<string, string>();
  for (const offer of request.capabilities) {
    if (offer.kind === 'refused') refused.set(offer.name, offer.message);
    else offered.set(offer.name, offer.kind === 'value' ? offer.value : methodProxy(offer.name, offer.methods, callCapability));
  }
  return {
    id,
    config: request.config,
    log: createChildLogger(send),
    get<T>(tokenOrName: Token<T> | string): T {
      const name = nameOf(tokenOrName);
      if (!requires.has(name)) throw new CapabilityError(`plugin '${id}' asked for '${name}' but its manifest does not list it in 'requires'`, { details: { plugin: id, capability: name } });
      const why = refused.get(name);
      if (why !== undefined || !offered.has(name)) throw new CapabilityError(why ?? `'${name}' is not available`, { details: { plugin: id, capability: name } });
      return offered.get(name) as T;
    },
    provide<T>(tokenOrName: Token<T> | string, value: T): void {
      const name = nameOf(tokenOrName);
      if (!provides.has(name)) throw new CapabilityError(`plugin '${id}' tried to provide '${name}' but its manifest does not list it in 'provides'`, { details: { plugin: id, capability: name } });
      let copy: unknown;
      try {
        copy = structuredClone(value);
      } catch {
        throw new CapabilityError(`plugin '${id}' runs in a process of its own and can provide only data (no functions) as '${name}'; mark it trusted in quire.json to provide a service`, { details: { plugin: id, capability: name } });
      }
      send({ type: 'provide', name, value: copy });
    },
    find<T>(tokenOrName: Token<T> | string): T | undefined {
      // A plugin in a process of its own gets what the kernel sent at activation; optional ones are not sent.
      const name = nameOf(tokenOrName);
      return requires.has(name) && offered.has(name) ? offered.get(name) as T : undefined;
    },
    provideBackend(kind): never {
      throw new CapabilityError(`plugin '${id}' runs in a process of its own and cannot provide a ${kind}; mark it trusted in quire.json to run it in the kernel's process`, { details: { plugin: id, kind } });
    },
    declineBackend(kind): never {
      throw new CapabilityError(`plugin '${id}' runs in a process of its own and cannot offer (or decline) a ${kind}; mark it trusted in quire.json to run it in the kernel's process`, { details: { plugin: id, kind } });
    },
    selectBackend(kind): never {
      throw new CapabilityError(`plugin '${id}' runs in a process of its own and cannot select a ${kind}`, { details: { plugin: id, kind } });
    },
    onDispose(fn: () => void | Promise<void>): void {
      disposers.push(fn);
    },
  };
}

/** A capability's methods, each sent to the kernel and answered there: always a Promise on this side. */
function methodProxy(name: string, methods: readonly string[], callCapability: CapabilityCaller): Record<string, (...args: unknown[]) => Promise<unknown>> {
  const proxy: Record<string, (...args: unknown[]) => Promise<unknown>> = Object.create(null) as Record<string, (...args: unknown[]) => Promise<unknown>>;
  for (const method of methods) proxy[method] = (...args: unknown[]) => callCapability(name, method, args);
  return Object.freeze(proxy);
}

function nameOf(tokenOrName: symbol | string): string {
  return typeof tokenOrName === 'string' ? tokenOrName : tokenName(tokenOrName);
}

/** One running call, as its handler sees it; `stop` is what the kernel's cancel does to it. */
export interface ChildCall {
  call: ActionCall;
  stop(reason: StopReason, error: WireError): void;
}

export interface ChildCallParts {
  id: number;
  principal: Principal;
  deniedNotebooks: readonly string[];
  readOnlyNotebooks: readonly string[];
  log: Logger;
  send: Send;
}

export function createChildCall(parts: ChildCallParts): ChildCall {
  const { id, send } = parts;
  let controller: AbortController | undefined;
  let stopKind: StopReason | undefined;
  let stopError: KernelError | undefined;
  let watching = false;
  // The kernel waits for a handler that watches its stop, and ends the process of one that does not.
  const watch = (): void => {
    if (watching) return;
    watching = true;
    send({ type: 'watching', id });
  };
  const call: ActionCall = {
    callId: String(id),
    principal: parts.principal,
    deniedNotebooks: new Set(parts.deniedNotebooks),
    readOnlyNotebooks: new Set(parts.readOnlyNotebooks),
    // Not carried back over the process boundary yet: the result of an out-of-process plugin counts as
    // holding every notebook (unless its manifest says it returns no notes).
    returned: () => undefined,
    log: parts.log,
    get signal(): AbortSignal {
      watch();
      controller ??= new AbortController();
      if (stopError && !controller.signal.aborted) controller.abort(stopError);
      return controller.signal;
    },
    get stopped(): StopReason | undefined {
      watch();
      return stopKind;
    },
    progress(update: ProgressUpdate): void {
      send({ type: 'progress', id, update: structuredClone(update) });
    },
  };
  return {
    call,
    stop(reason, error) {
      if (stopKind !== undefined) return;
      stopKind = reason;
      stopError = new KernelError((error.code ?? 'ACTION_CANCELLED') as ErrorCode, error.message, { details: error.details ?? {} });
      controller?.abort(stopError);
    },
  };
}
