import type { ActionCall } from '../plugin-api.js';

/** Who asks, as far as reads are concerned. */
export type ReadCaller = Pick<ActionCall, 'principal'> & Partial<Pick<ActionCall, 'deniedNotebooks'>>;

/** A notebook's own setting that decides who reads it. */
export interface ReadableNotebook {
  access: 'private' | 'published';
}

/**
 * The reader scope and the agent scope of every read, answered here for every plugin: a reader reads
 * published notebooks only; the agent none that a deny rule or the notebook's privacy (`agent: none`)
 * closes to it (the pipeline puts those in the call's deniedNotebooks, core/gate/agent-limits.ts);
 * administrators read everything. What a caller may not read is answered as if it did not exist.
 */
export function mayRead(call: ReadCaller, notebook: string, conf: ReadableNotebook | undefined): boolean {
  if (!conf) return false;
  if (call.deniedNotebooks?.has(notebook)) return false;
  return call.principal.role !== 'reader' || conf.access === 'published';
}

/**
 * Whether a caller may read what is left of a notebook that no longer exists (its documents' history,
 * its files in snapshots): a person administrator under no deny rule. The notebook's own privacy went
 * with it, so nobody else is assumed to have been allowed.
 */
export function mayReadRemoved(call: ReadCaller): boolean {
  return call.principal.kind === 'person' && call.principal.role === 'admin' && (call.deniedNotebooks?.size ?? 0) === 0;
}

/** Whether the caller's reads must be narrowed at all: an administrator under no rule reads everything. */
export function readsAreScoped(call: ReadCaller): boolean {
  return call.principal.role === 'reader' || (call.deniedNotebooks?.size ?? 0) > 0;
}

/** The notebooks among these that the caller may read (for a query's notebook filter). */
export function readableNotebooks(call: ReadCaller, notebooks: Iterable<readonly [string, ReadableNotebook]>): string[] {
  const out: string[] = [];
  for (const [id, conf] of notebooks) if (mayRead(call, id, conf)) out.push(id);
  return out;
}
