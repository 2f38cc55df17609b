import { AsyncLocalStorage } from 'node:async_hooks';
import type { Effect } from '../plugin-api.js';

/** The action whose handler is running in the current async context. */
export interface RunningAction {
  plugin: string;
  tool: string;
  action: string;
  /** What the manifest declares; enforcement uses this, the tighter of declared and effective. */
  declaredEffects: readonly Effect[];
  /** Called when the action tries something it did not declare (for the audit). */
  onRefused(kind: 'egress', target: string): void;
}

const storage = new AsyncLocalStorage<RunningAction>();

export function runInActionScope<T>(action: RunningAction, fn: () => T): T {
  return storage.run(action, fn);
}

export function currentAction(): RunningAction | undefined {
  return storage.getStore();
}
