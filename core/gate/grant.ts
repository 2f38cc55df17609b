import type { Effect } from '../plugin-api.js';

/** A standing permission ("always allow"): visible in grants.json, scoped, optionally expiring, revocable. */
export interface Grant {
  id: string;
  plugin: string;
  tool: string;
  action: string;
  /** Effects the person saw when granting; a later version of the action with more effects is not covered. */
  effects: Effect[];
  /** Limits the grant to calls on this notebook. */
  notebook?: string;
  /** ISO time after which the grant no longer matches. */
  expiresAt?: string;
  createdAt: string;
  createdBy: string;
  /** The confirmation that created it, if any. */
  fromConfirmation?: string;
}

export type GrantInput = Omit<Grant, 'id' | 'createdAt'>;
