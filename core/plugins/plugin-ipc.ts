import { isRaisableCode } from '../errors.js';
import type { LogLevel } from '../log.js';
import type { Effect, Principal, ProgressUpdate, StopReason } from '../plugin-api.js';

/**
 * The protocol between the kernel and a plugin running in a process of its own (plugin-child-host.ts),
 * over a pipe of length-prefixed structured-clone frames (framed-channel.ts). One request/response pair per call,
 * matched by `id`; nothing but these messages crosses, so what the plugin reaches of the kernel is
 * exactly what answers them.
 */

/** An error as it crosses: `kernel` says the code is one of the kernel's (a KernelError), not Node's. */
export interface WireError {
  message: string;
  code?: string;
  kernel?: boolean;
  details?: Record<string, unknown>;
}

/** One action of the plugin, with what its manifest declares (the child's egress guard enforces it). */
export interface WireAction {
  tool: string;
  action: string;
  declaredEffects: Effect[];
}

/** A capability the manifest `requires`, as the child may have it: a copy, methods called over IPC, or refused. */
export type CapabilityOffer =
  | { name: string; kind: 'value'; value: unknown }
  | { name: string; kind: 'methods'; methods: string[] }
  | { name: string; kind: 'refused'; message: string };

export interface ActivateRequest {
  type: 'activate';
  pluginId: string;
  entryUrl: string;
  config: Record<string, unknown>;
  requires: string[];
  provides: string[];
  actions: WireAction[];
  capabilities: CapabilityOffer[];
}

export interface CallRequest {
  type: 'call';
  id: number;
  tool: string;
  action: string;
  input: Record<string, unknown>;
  principal: Principal;
  deniedNotebooks: string[];
  readOnlyNotebooks: string[];
  /** When the kernel ends the call (epoch ms), for the plugin's planning; the kernel enforces it. */
  deadline: number;
}

export type KernelMessage =
  | ActivateRequest
  | CallRequest
  | { type: 'cancel'; id: number; reason: StopReason; error: WireError }
  | { type: 'capability-result'; id: number; value?: unknown; error?: WireError }
  | { type: 'dispose' };

/** tool → action → whether `activate` returned a function there (the kernel matches it to the manifest). */
export type HandlerShape = Record<string, Record<string, boolean>>;

export type ChildMessage =
  | { type: 'activated'; handlers: HandlerShape }
  | { type: 'activation-failed'; phase: 'load' | 'activate'; error: WireError }
  | { type: 'result'; id: number; value: unknown }
  | { type: 'error'; id: number; error: WireError }
  /** The handler read its signal or `stopped`: it means to stop by itself, so a stop waits for its answer. */
  | { type: 'watching'; id: number }
  | { type: 'progress'; id: number; update: ProgressUpdate }
  | { type: 'log'; level: LogLevel; message: string; fields?: Record<string, unknown> }
  | { type: 'provide'; name: string; value: unknown }
  | { type: 'capability'; id: number; callId?: number; name: string; method: string; args: unknown[] }
  /** The child's egress guard refused something: for the audit of the call, or the log outside any call. */
  | { type: 'refused'; callId?: number; target: string }
  | { type: 'disposed' };

/** What is safe to send of anything thrown: message, code, and a KernelError's details. */
export function toWireError(error: unknown, isKernelError: (value: unknown) => boolean): WireError {
  if (!(error instanceof Error)) return { message: String(error) };
  const { code, details, permission } = error as Error & { code?: unknown; details?: unknown; permission?: unknown };
  const kernel = isKernelError(error);
  const wire: WireError = { message: error.message, ...(typeof code === 'string' ? { code } : {}), ...(kernel ? { kernel } : {}) };
  // A plain Error with a code a plugin may raise (it cannot import the kernel's class) keeps its details too.
  if ((kernel || isRaisableCode(code)) && details !== null && typeof details === 'object') wire.details = { ...(details as Record<string, unknown>) };
  // The permission model's refusals say which permission was missing; the path is left out.
  else if (typeof permission === 'string') wire.details = { permission };
  return wire;
}
