import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import workerThreads, { BroadcastChannel, type WorkerOptions } from 'node:worker_threads';
import { currentAction, currentActivation, type RunningAction } from './action-scope.js';
import { refuseUndeclaredEgress } from './egress-refusal.js';
import type { GuardedWorkerScope, GuardedWorkerTarget } from './worker-entry.js';

/** Options that run code in a worker before its own script, hence before a guard could be installed there. */
const LOADS_CODE = /^(-r|--require|--import|--loader|--experimental-loader)(=|$)/;

/**
 * A worker thread is a fresh JavaScript world: the guard patched into this one is not there, and neither
 * is the async context that says which action runs. So a worker started by an action that does not
 * declare `dataEgress` starts through a small entry that first installs the same guard in the worker and
 * makes the whole thread that action, then loads the script asked for. Refusals there are reported back
 * to this thread for the audit. Options that would run code before that entry (`--require`) are refused.
 */
export function guardWorkers(): void {
  const Original = workerThreads.Worker;
  class GuardedWorker extends Original {
    constructor(filename: string | URL, options: WorkerOptions = {}) {
      const action = currentAction() ?? outsideActions();
      const plan = action && !action.declaredEffects.includes('dataEgress') ? planGuardedStart(filename, options, action) : undefined;
      super(plan ? plan.source : filename, plan ? { ...options, eval: true } : options);
      if (plan) reportRefusals(this, plan.channel, action!);
      else if (action && action.native !== true) guardMessages(this, action);
    }
  }
  Object.defineProperty(workerThreads, 'Worker', { value: GuardedWorker, writable: true, configurable: true, enumerable: true });
}

/**
 * A worker a plugin starts outside any action (in `activate`) would serve every later action, those
 * without dataEgress too, and messages to it cannot be checked: it gets no effects, so no network.
 * A plugin that needs a worker on the network starts it in an action that declares dataEgress.
 */
function outsideActions(): RunningAction | undefined {
  const activation = currentActivation();
  if (!activation) return undefined;
  return {
    plugin: activation.plugin, tool: '', action: '', declaredEffects: [], label: `a worker thread plugin '${activation.plugin}' started outside its actions`,
    onRefused: (kind, target) => activation.onRefused(kind, target),
  };
}

/**
 * A worker a plugin's action that declares dataEgress started may reach the network, and a plugin
 * could keep it: a message to it from a later action that does not declare dataEgress is refused, as
 * a write to a kept socket is (socket-guard.ts). A native plugin's workers are the kernel's own.
 */
function guardMessages(worker: InstanceType<typeof workerThreads.Worker>, startedBy: RunningAction): void {
  const post = worker.postMessage.bind(worker);
  const by = startedBy.label ?? `action ${startedBy.plugin}/${startedBy.tool}/${startedBy.action}`;
  Object.defineProperty(worker, 'postMessage', {
    value: (...args: Parameters<typeof post>) => {
      refuseUndeclaredEgress(`a worker thread started by ${by}, which may reach the network`);
      post(...args);
    },
    writable: true, configurable: true,
  });
}

interface GuardedStart {
  source: string;
  channel: string;
}

function planGuardedStart(filename: string | URL, options: WorkerOptions, action: RunningAction): GuardedStart {
  for (const arg of options.execArgv ?? []) if (LOADS_CODE.test(String(arg))) refuseUndeclaredEgress(`worker thread preloading code (${String(arg)})`);
  const entry = workerEntryUrl();
  // Without the compiled entry there is no way to guard the worker: refused rather than started unguarded.
  if (!entry) refuseUndeclaredEgress('worker thread (its egress guard is not built: run npm run build)');
  const channel = `quire-egress-${randomUUID()}`;
  const scope: GuardedWorkerScope = { plugin: action.plugin, tool: action.tool, action: action.action, declaredEffects: [...action.declaredEffects], channel, ...(action.label ? { label: action.label } : {}) };
  const target: GuardedWorkerTarget = options.eval === true ? { kind: 'eval', source: String(filename) } : { kind: 'module', url: moduleUrl(filename) };
  // Runs as the worker's eval script (CommonJS): nothing of the target runs before the guard is in place.
  const source = `import(${JSON.stringify(entry)}).then((entry) => entry.startGuardedWorker(${JSON.stringify(scope)}, ${JSON.stringify(target)}))`
    + '.catch((error) => process.nextTick(() => { throw error; }));';
  return { source, channel };
}

function reportRefusals(worker: InstanceType<typeof workerThreads.Worker>, name: string, action: RunningAction): void {
  const channel = new BroadcastChannel(name);
  channel.unref();
  channel.onmessage = (event: unknown) => {
    const data = (event as { data?: { target?: unknown } }).data;
    action.onRefused('egress', String(data?.target ?? 'unknown'));
  };
  worker.once('exit', () => channel.close());
}

function moduleUrl(filename: string | URL): string {
  if (filename instanceof URL) return filename.href;
  return pathToFileURL(resolve(filename)).href;
}

/** The compiled entry: beside this module when running from dist/, in dist/ when running from the sources. */
function workerEntryUrl(): string | undefined {
  for (const candidate of ['./worker-entry.js', '../../dist/core/egress/worker-entry.js']) {
    const url = new URL(candidate, import.meta.url);
    if (existsSync(fileURLToPath(url))) return url.href;
  }
  return undefined;
}
