import { BroadcastChannel } from 'node:worker_threads';
import type { Effect } from '../plugin-api.js';
import { fixThreadAction } from './action-scope.js';
import { installEgressGuard } from './egress-guard.js';

/** The action that started a worker thread, as the thread is told it (plain data). */
export interface GuardedWorkerScope {
  plugin: string;
  tool: string;
  action: string;
  declaredEffects: Effect[];
  /** The BroadcastChannel on which refusals go back to the thread that audits them. */
  channel: string;
  /** How refusals name the thread when it is not one action's (a worker started in `activate`). */
  label?: string;
}

/** What the worker was asked to run: a module (file: or data: URL) or eval source. */
export type GuardedWorkerTarget = { kind: 'module'; url: string } | { kind: 'eval'; source: string };

/** Runs inside the worker, before anything of its target: the guard, the thread's action, then the target. */
export async function startGuardedWorker(scope: GuardedWorkerScope, target: GuardedWorkerTarget): Promise<void> {
  installEgressGuard();
  const channel = new BroadcastChannel(scope.channel);
  channel.unref();
  fixThreadAction({
    plugin: scope.plugin, tool: scope.tool, action: scope.action, declaredEffects: scope.declaredEffects,
    label: scope.label ?? `a worker thread of action ${scope.plugin}/${scope.tool}/${scope.action}`,
    onRefused: (_kind, refused) => channel.postMessage({ target: refused }),
  });
  if (target.kind === 'module') {
    await import(target.url);
    return;
  }
  // Indirect eval runs the source in the global scope, as the worker would have (require is global there).
  (0, eval)(target.source);
}
