import net from 'node:net';
import { currentPlugin } from './action-scope.js';
import { describeSocketTarget, refuseUndeclaredEgress } from './egress-refusal.js';

/** Who opened a socket (a plugin, in an action or in `activate`) and where to: set once, at connect. */
const OPENED_BY = Symbol('quire.egress.opened-by');

interface Opened {
  plugin: string;
  target: string;
}

type TrackedSocket = net.Socket & { [OPENED_BY]?: Opened };

/**
 * Connecting is checked against the running action, and a socket a plugin opened is checked again on
 * every write: a socket opened in `activate` (outside any action) or by an action that declares
 * `dataEgress`, and kept, would otherwise carry whatever a later action without it writes. Sockets the
 * kernel opens or accepts (its HTTP answers, pipes to its log) are not a plugin's and stay unchecked.
 */
export function guardSockets(): void {
  const proto = net.Socket.prototype as TrackedSocket;
  const connect = proto.connect as (...args: unknown[]) => net.Socket;
  define(proto, 'connect', function guardedConnect(this: TrackedSocket, ...args: unknown[]): net.Socket {
    const target = describeSocketTarget(args[0], args[1]);
    refuseUndeclaredEgress(target);
    const plugin = currentPlugin();
    if (plugin !== undefined && this[OPENED_BY] === undefined) this[OPENED_BY] = { plugin, target };
    return connect.apply(this, args);
  });
  for (const name of ['write', 'end'] as const) {
    const original = proto[name] as (...args: unknown[]) => unknown;
    define(proto, name, function guardedWrite(this: TrackedSocket, ...args: unknown[]): unknown {
      const opened = this[OPENED_BY];
      if (opened !== undefined && carriesData(name, args)) refuseUndeclaredEgress(opened.target);
      return original.apply(this, args);
    });
  }
}

/** `end()` and `end(callback)` send nothing; `write(...)` and `end(data, ...)` do. */
function carriesData(name: 'write' | 'end', args: unknown[]): boolean {
  if (name === 'write') return true;
  const first = args[0];
  return first !== undefined && first !== null && typeof first !== 'function';
}

function define(target: object, name: string, value: (...args: never[]) => unknown): void {
  Object.defineProperty(target, name, { value, writable: true, configurable: true, enumerable: false });
}
