import { AsyncLocalStorage } from 'node:async_hooks';
import type { Effect } from '../plugin-api.js';

/** The action whose handler is running in the current async context. */
export interface RunningAction {
  plugin: string;
  tool: string;
  action: string;
  /** What the manifest declares; enforcement uses this, the tighter of declared and effective. */
  declaredEffects: readonly Effect[];
  /** How refusals name what was running, when it is not one action (a plugin's code outside its actions). */
  label?: string;
  /** A native plugin's action: the kernel's own workers it starts are not held to it afterwards. */
  native?: boolean;
  /** Called when the action tries something it did not declare (for the audit). */
  onRefused(kind: 'egress', target: string): void;
  /**
   * Set when the call has answered, in a process that hosts one plugin: what it left running (a timer,
   * a callback) answers to the host's idle scope from then on, not to the call. A timer a dataEgress
   * action left behind carried its scope, and sent what a later action with no such effect queued.
   */
  ended?: boolean;
}

const storage = new AsyncLocalStorage<RunningAction>();
/** A plugin being activated, and where refusals outside its actions are reported (there is no call to audit). */
export interface ActivatingPlugin {
  plugin: string;
  onRefused(kind: 'egress', target: string): void;
}

const activations = new AsyncLocalStorage<ActivatingPlugin>();
/** A worker thread started by an action: everything in the thread is that action, whatever its async context says. */
let threadAction: RunningAction | undefined;
/** An out-of-process plugin host: code outside any action answers to this (no effects). */
let idleAction: RunningAction | undefined;

export function runInActionScope<T>(action: RunningAction, fn: () => T): T {
  return storage.run(action, fn);
}

export function currentAction(): RunningAction | undefined {
  if (threadAction) return threadAction;
  const running = storage.getStore();
  if (running === undefined || running.ended === true) return idleAction ?? running;
  return running;
}

/**
 * Runs a plugin's loading and `activate`, so that what it opens there (and in the timers and callbacks
 * it starts there) is known to be that plugin's.
 */
export function runInActivation<T>(plugin: ActivatingPlugin, fn: () => T): T {
  return activations.run(plugin, fn);
}

/** The plugin whose code is running outside any of its actions (in `activate`, or what it started there). */
export function currentActivation(): ActivatingPlugin | undefined {
  return activations.getStore();
}

/** The plugin whose code is running: the action's, or the plugin being activated; undefined for the kernel's own code. */
export function currentPlugin(): string | undefined {
  return currentAction()?.plugin ?? activations.getStore()?.plugin;
}

/**
 * Makes the whole thread one action (a worker thread an action started). Async context cannot be relied
 * on there: a worker's message handlers run outside any context its code entered.
 */
export function fixThreadAction(action: RunningAction): void {
  threadAction = action;
}

/** What code outside any action answers to, in a process that hosts one plugin. */
export function setIdleAction(action: RunningAction): void {
  idleAction = action;
}
