import type { Effect } from '../plugin-api.js';

export type ConfirmationStatus = 'pending' | 'approved' | 'rejected' | 'consumed' | 'expired';

/**
 * A question to the person: may this exact call (tool, action, arguments) run? Or, of kind `release`:
 * may this tool result, which holds notes of local-only notebooks, be sent to the model's server
 * (its `arguments` show what would leave: the tool, the notebooks, the text)?
 */
export interface Confirmation {
  id: string;
  /**
   * Absent for a call; `release` for a tool result held back from a model off this machine; `budget`
   * for a model request that would pass a budget (budgets.whenExceeded: ask).
   */
  kind?: 'release' | 'budget';
  /** Why the person is asked when a grant or the session mode would otherwise have let it run. */
  note?: string;
  plugin: string;
  tool: string;
  action: string;
  wireName: string;
  arguments: unknown;
  /** Canonical SHA-256 of the arguments: an answer counts only for these exact arguments. */
  argsHash: string;
  effects: Effect[];
  destructive: boolean;
  principal: string;
  sessionId?: string;
  turnId?: string;
  notebook?: string;
  createdAt: string;
  status: ConfirmationStatus;
  answeredAt?: string;
  answeredBy?: string;
  /** The grant an "always" answer created. */
  grantId?: string;
}

export interface ConfirmationAnswer {
  approved: boolean;
  /** Approve this call and create a standing grant for later ones. */
  always?: boolean;
  /** Must equal the confirmation's argsHash. */
  argsHash: string;
  answeredBy: string;
  /** Scope of the grant "always" creates (defaults: the call's notebook, no expiry). */
  grantNotebook?: string | null;
  grantExpiresAt?: string;
}
