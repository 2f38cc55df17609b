import type { Confirmation } from '../gate/confirmation.js';
import type { Question } from './questions.js';
import type { ProgressUpdate } from '../plugin-api.js';

/** What a turn tells its watcher (the SSE stream), in order; `turn` first, `done` or `error` last. */
export type TurnEvent =
  | { type: 'turn'; turnID: string }
  | { type: 'thinking'; roundID: string; phase: 'analyzing' | 'processing' }
  | { type: 'content'; roundID: string; delta: string }
  | { type: 'reasoning'; roundID: string; delta: string }
  | { type: 'tool_call'; roundID: string; toolCallID: string; name: string; arguments: string }
  | { type: 'confirm'; roundID: string; confirmation: Confirmation }
  | { type: 'question'; roundID: string; questionID: string; questions: Question[] }
  | { type: 'snapshot'; roundID: string; snapshotID: string }
  | { type: 'tool_result'; roundID: string; toolCallID: string; ok: boolean; output: string }
  /** A long call runs as this job (`GET /api/jobs/{jobID}`), and how far it has come. */
  | { type: 'job'; roundID: string; toolCallID: string; jobID: string; action: string }
  | { type: 'progress'; roundID: string; toolCallID: string; progress: ProgressUpdate }
  | { type: 'retry'; roundID: string; attempt: number; max: number; delayMs: number; category: string }
  /** The turn's tokens so far, and its cost in USD from usage.prices (null: a price is unknown; absent: no ledger). */
  | { type: 'usage'; promptTokens: number; completionTokens: number; cost?: number | null }
  /**
   * A request to a model off this machine went without `count` tool results from local-only notebooks,
   * and `answers` earlier answers a model on this machine wrote from them (markers in their place).
   */
  | { type: 'withheld'; count: number; answers?: number; reason: 'local-only' }
  | { type: 'done'; turnID: string; state: 'finished' | 'interrupted' }
  | { type: 'error'; turnID: string; code: string; message: string };
