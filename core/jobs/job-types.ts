import type { ProgressUpdate, StopReason } from '../plugin-api.js';

/**
 * running → succeeded | failed | cancelled | timed_out; `interrupted` when the kernel stopped while it
 * ran (read back at the next start). A cancelled or timed-out job that stopped at a safe point keeps
 * the partial result its action reported.
 */
export type JobState = 'running' | 'succeeded' | 'failed' | 'cancelled' | 'timed_out' | 'interrupted';

/** The durable record of one job: `<workspace>/jobs/<id>.json`. */
export interface JobRecord {
  id: string;
  /** The action's wire name (`import_markdown`) and its path. */
  action: string;
  plugin: string;
  tool: string;
  name: string;
  /** Who started it (token name, `agent:<session>/<turn>/<call>`, `mcp:<name>`). */
  startedBy: string;
  sessionId?: string;
  turnId?: string;
  state: JobState;
  created: string;
  updated: string;
  ended?: string;
  progress: ProgressUpdate;
  /** Why it ended early, when it did. */
  stopped?: StopReason;
  /** What the action answered (for a stopped job: what it did before stopping). */
  result?: unknown;
  error?: { code: string; message: string; details?: Record<string, unknown> };
}

/** What a watcher of a job hears: each progress report, and the end. */
export type JobEvent =
  | { type: 'progress'; job: JobRecord }
  | { type: 'end'; job: JobRecord };

export const isFinished = (state: JobState): boolean => state !== 'running';
