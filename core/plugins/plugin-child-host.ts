import { Socket } from 'node:net';
import { pathToFileURL } from 'node:url';
import { currentAction, runInActionScope, runInActivation, setIdleAction, type RunningAction } from '../egress/action-scope.js';
import { installEgressGuard } from '../egress/egress-guard.js';
import { isKernelError } from '../errors.js';
import type { ActionHandler, PluginDefinition } from '../plugin-api.js';
import { FramedChannel } from './framed-channel.js';
import { createChildCall, createChildContext, createChildLogger, type ChildCall } from './child-context.js';
import { toWireError, type ActivateRequest, type CallRequest, type ChildMessage, type HandlerShape, type KernelMessage, type WireAction } from './plugin-ipc.js';

/**
 * The host process of one untrusted plugin (started by plugin-process.ts, inside the sandbox of
 * child-sandbox.ts). It loads the plugin, runs its handlers when the kernel asks, and reaches the kernel
 * only by the messages of plugin-ipc.ts. The egress guard is installed here too, before any plugin code:
 * each call runs in its action's scope, and code outside any action may not reach the network at all.
 */

/**
 * The kernel, over the pipe at descriptor 3 (see framed-channel.ts). Without the kernel there is nobody
 * to answer: a host whose pipe closed, left behind, ends itself.
 */
const channel = new FramedChannel(new Socket({ fd: 3, readable: true, writable: true }), {
  message: (message) => void dispatch(message as KernelMessage),
  protocolError: () => process.exit(1),
  closed: () => process.exit(0),
});

/** Throws when the message cannot be serialised (a function in a result): the caller says so instead. */
const send = (message: ChildMessage): void => {
  channel.send(message);
};

let actions = new Map<string, WireAction>();
const handlers = new Map<string, ActionHandler>();
const running = new Map<number, ChildCall>();
const disposers: (() => unknown)[] = [];
const capabilityAnswers = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
const scopeCalls = new WeakMap<RunningAction, number>();
let nextCapabilityId = 1;
let pluginId = '';

installEgressGuard();
// The kernel ends this process when it closes; Ctrl-C at a terminal reaches the kernel, which disposes it in order.
process.on('SIGINT', () => undefined);

async function dispatch(message: KernelMessage): Promise<void> {
  switch (message.type) {
    case 'activate': return activate(message);
    case 'call': return runCall(message);
    case 'cancel': return running.get(message.id)?.stop(message.reason, message.error);
    case 'capability-result': return answerCapability(message.id, message.value, message.error);
    case 'dispose': return dispose();
  }
}

async function activate(request: ActivateRequest): Promise<void> {
  pluginId = request.pluginId;
  actions = new Map(request.actions.map((action) => [`${action.tool}.${action.action}`, action]));
  setIdleAction({
    plugin: pluginId, tool: '', action: '', declaredEffects: [], label: `plugin '${pluginId}' outside any of its actions`,
    onRefused: (_kind, target) => send({ type: 'refused', target }),
  });
  const ctx = createChildContext(request, send, callCapability, disposers);
  const activating = { plugin: pluginId, onRefused: (_kind: 'egress', target: string) => send({ type: 'refused', target }) };
  let definition: PluginDefinition;
  try {
    const module = await runInActivation(activating, () => import(request.entryUrl.startsWith('file:') ? request.entryUrl : pathToFileURL(request.entryUrl).href) as Promise<{ default?: Partial<PluginDefinition> }>);
    if (typeof module.default?.activate !== 'function') throw new Error('the entry must export definePlugin({ activate }) as its default export');
    definition = module.default as PluginDefinition;
  } catch (error) {
    return send({ type: 'activation-failed', phase: 'load', error: toWireError(error, isKernelError) });
  }
  try {
    const returned = await runInActivation(activating, () => definition.activate(ctx));
    send({ type: 'activated', handlers: collectHandlers(returned) });
  } catch (error) {
    send({ type: 'activation-failed', phase: 'activate', error: toWireError(error, isKernelError) });
  }
}

/** Only own properties, as the kernel's matchHandlers reads them; the kernel decides what matches. */
function collectHandlers(returned: unknown): HandlerShape {
  const shape: HandlerShape = {};
  if (returned === null || typeof returned !== 'object') return shape;
  for (const [tool, toolHandlers] of Object.entries(returned)) {
    const actionShape: Record<string, boolean> = {};
    if (toolHandlers !== null && typeof toolHandlers === 'object') {
      for (const [action, handler] of Object.entries(toolHandlers as Record<string, unknown>)) {
        actionShape[action] = typeof handler === 'function';
        if (typeof handler === 'function') handlers.set(`${tool}.${action}`, handler as ActionHandler);
      }
    }
    Object.defineProperty(shape, tool, { value: actionShape, enumerable: true, writable: true, configurable: true });
  }
  return shape;
}

async function runCall(request: CallRequest): Promise<void> {
  const key = `${request.tool}.${request.action}`;
  const handler = handlers.get(key);
  const action = actions.get(key);
  if (!handler || !action) return send({ type: 'error', id: request.id, error: { message: `no handler for ${key}` } });
  const log = createChildLogger(send);
  const child = createChildCall({ id: request.id, principal: request.principal, deniedNotebooks: request.deniedNotebooks, readOnlyNotebooks: request.readOnlyNotebooks ?? [], log, send });
  running.set(request.id, child);
  const scope: RunningAction = {
    plugin: pluginId, tool: request.tool, action: request.action, declaredEffects: action.declaredEffects,
    onRefused: (_kind, target) => send({ type: 'refused', callId: request.id, target }),
  };
  scopeCalls.set(scope, request.id);
  try {
    const value = await runInActionScope(scope, () => handler(request.input, child.call));
    sendResult(request.id, value);
  } catch (error) {
    send({ type: 'error', id: request.id, error: toWireError(error, isKernelError) });
  } finally {
    // What the call left running no longer answers to it (action-scope.ts, `ended`).
    scope.ended = true;
    running.delete(request.id);
  }
}

function sendResult(id: number, value: unknown): void {
  try {
    send({ type: 'result', id, value });
  } catch (error) {
    // Serialising happens here, synchronously: a function or a symbol in the result cannot cross.
    send({ type: 'error', id, error: { message: `the handler's result cannot be sent to the kernel: ${(error as Error).message}` } });
  }
}

function callCapability(name: string, method: string, args: unknown[]): Promise<unknown> {
  const id = nextCapabilityId++;
  return new Promise((resolve, reject) => {
    capabilityAnswers.set(id, { resolve, reject });
    const callId = currentCallId();
    send({ type: 'capability', id, name, method, args, ...(callId === undefined ? {} : { callId }) });
  });
}

/** The call whose scope this code runs in, so that the kernel runs the capability in that call's scope too. */
function currentCallId(): number | undefined {
  const action = currentAction();
  return action ? scopeCalls.get(action) : undefined;
}

function answerCapability(id: number, value: unknown, error: { message: string; code?: string } | undefined): void {
  const waiting = capabilityAnswers.get(id);
  capabilityAnswers.delete(id);
  if (!waiting) return;
  if (error) waiting.reject(Object.assign(new Error(error.message), error.code ? { code: error.code } : {}));
  else waiting.resolve(value);
}

async function dispose(): Promise<void> {
  for (const fn of disposers.splice(0).reverse()) {
    try {
      await fn();
    } catch (error) {
      send({ type: 'log', level: 'error', message: 'plugin dispose failed', fields: { error: (error as Error).message } });
    }
  }
  channel.send({ type: 'disposed' } satisfies ChildMessage, () => process.exit(0));
}
