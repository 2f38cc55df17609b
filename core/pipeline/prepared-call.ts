import type { GateDecision } from '../gate/decide.js';
import type { Principal } from '../plugin-api.js';
import type { RegisteredAction } from '../registry/action-registry.js';
import type { CancelSource } from './cancel-source.js';

/** How the gate let a call through, or that it needs the person; persons' own calls skip the gate. */
export type CallDecision = GateDecision | { outcome: 'run'; reason: 'caller_is_person' };

/** A call that passed lookup, validation, the role check and the gate, ready to run or to confirm. */
export interface PreparedCall {
  readonly id: string;
  readonly entry: RegisteredAction;
  /** Validated input, with schema defaults applied; a copy, never the caller's object. */
  readonly input: Record<string, unknown>;
  /** Canonical hash of the input; set when a confirmation or the audit needs it. */
  readonly argsHash: string;
  readonly principal: Principal;
  readonly notebook: string | undefined;
  readonly decision: CallDecision;
  /** Notebooks a deny rule keeps this (agent) call out of; the handler narrows what it reads by them. */
  readonly deniedNotebooks: ReadonlySet<string>;
  /** Notebooks this (agent) call may read but not change (privacy `agent: read`). */
  readonly readOnlyNotebooks: ReadonlySet<string>;
  readonly cancel: CancelSource | undefined;
  /** Filled while the handler runs: the notebooks whose content its result holds, as it reported them. */
  readonly returned: ReturnedNotebooks;
}

/** What a handler reported of the notebooks in its result; `said` stays false if it reported nothing. */
export interface ReturnedNotebooks {
  said: boolean;
  readonly notebooks: Set<string>;
}

/**
 * The notebooks a finished call's result holds: what its handler reported; none for an action that
 * declares it returns no notes; otherwise unknown, which counts as every notebook.
 */
export function notebooksInResult(call: Pick<PreparedCall, 'entry' | 'returned'>): string[] | 'all' {
  if (call.returned.said) return [...call.returned.notebooks];
  return call.entry.spec.returnsNotes === false ? [] : 'all';
}

/**
 * The call an error came out of, once its handler ran: a surface that holds back results (MCP, for
 * local-only notebooks) holds back an error's text too when the handler said it names such notes.
 */
const failedCalls = new WeakMap<object, PreparedCall>();

export function noteFailedCall(error: unknown, call: PreparedCall): void {
  if (typeof error === 'object' && error !== null) failedCalls.set(error, call);
}

export function failedCallOf(error: unknown): PreparedCall | undefined {
  return typeof error === 'object' && error !== null ? failedCalls.get(error) : undefined;
}

export interface ActionRef {
  plugin: string;
  tool: string;
  action: string;
}
