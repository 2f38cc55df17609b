import { createToken } from '../tokens.js';

/** What the gate knows of a call when it asks which notebook the call touches. */
export interface ScopedCall {
  plugin: string;
  tool: string;
  action: string;
  input: Readonly<Record<string, unknown>>;
}

/**
 * Tells the gate which notebook a call touches when its input names a block or document rather than a
 * notebook, so that notebook-scoped grants and deny rules cannot be side-stepped by naming a block.
 * Provided by the native plugin that owns notebooks.
 */
export interface NotebookScope {
  /** Every notebook the call's ids lie in (a move may touch two); empty when it names none. */
  notebooksOf(call: ScopedCall): string[];
}

/** A capability only native plugins may provide: a user plugin could otherwise steer the gate. */
export const NOTEBOOK_SCOPE = createToken<NotebookScope>('gate.notebook-scope');
