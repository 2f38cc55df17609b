import type { JobRecord } from '../jobs/job-types.js';
import type { Confirmation } from '../gate/confirmation.js';
import type { SessionMode } from '../gate/decide.js';
import type { Principal, ProgressUpdate } from '../plugin-api.js';
import type { CancelSource } from './cancel-source.js';
import type { ActionRef, PreparedCall } from './prepared-call.js';

/** What a surface asks of the action pipeline, and what it answers (action-pipeline.ts). */
export interface ActionRequest {
  /** A wire name (`block_get`) or the plugin/tool/action path. */
  target: string | ActionRef;
  input: unknown;
  principal: Principal;
  /** Stops the call when the caller goes away. */
  signal?: CancelSource;
  /** The agent session's mode; only agent calls go through the gate. */
  sessionMode?: SessionMode;
  /** The agent's model has seen local-only notes this turn: a call with dataEgress asks the person (decide.ts). */
  localOnlyInContext?: boolean;
  /**
   * The caller hands the input over (e.g. a freshly parsed request body) and will not look at it again,
   * so it need not be copied before schema defaults are applied to it.
   */
  ownsInput?: boolean;
  /** A long action answers its job at once instead of waiting for it (HTTP); others are unaffected. */
  background?: boolean;
  /** Progress the action reports (a job's, or any action's that reports it). */
  onProgress?: (update: ProgressUpdate) => void;
  /** Told the job a long action runs as, when it starts. */
  onJob?: (job: JobRecord) => void;
}

/** What running a prepared call may add: the approval, and who hears its progress and its job. */
export interface ExecuteOptions {
  confirmationId?: string;
  onProgress?: (update: ProgressUpdate) => void;
  onJob?: (job: JobRecord) => void;
}

export type CallOutcome =
  | { status: 'ok'; value: unknown; call: PreparedCall }
  | { status: 'job'; job: JobRecord; done: Promise<unknown>; call: PreparedCall }
  | { status: 'confirmation_required'; confirmation: Confirmation; call: PreparedCall };
