import type { ActionCall, Principal } from '../../core/index.js';
import type { Block } from './block-model.js';
import { forgetFingerprint } from './index-rows.js';

/**
 * Who changed a block, in the form DESIGN.md §3 fixes: `agent:<session>/<turn>/<call>` for the agent,
 * `person:<token name>` for people, so that "what did this turn change" is one query on `updated_by`.
 */
export function updatedBy(call: Pick<ActionCall, 'principal' | 'callId'>): string {
  const principal: Principal = call.principal;
  switch (principal.kind) {
    case 'agent':
      return principal.name.startsWith('agent:') ? principal.name : `agent:${principal.sessionId ?? '-'}/${principal.turnId ?? '-'}/${call.callId}`;
    case 'person': return `person:${principal.name}`;
    case 'mcp': return `mcp:${principal.name}`;
    case 'kernel': return 'kernel';
  }
}

/**
 * A timestamp for `created`/`updated`: ISO 8601 with milliseconds, strictly later than `previous`, so
 * that an expected-`updated` check can tell two writes in the same millisecond apart.
 */
export function nextStamp(previous: string | undefined, now: Date = new Date()): string {
  const stamp = now.toISOString();
  if (previous === undefined || stamp > previous) return stamp;
  const after = Date.parse(previous);
  return Number.isNaN(after) ? stamp : new Date(after + 1).toISOString();
}

/** Marks a block as changed by this caller now. */
export function touch(block: Block, by: string, now: Date = new Date()): void {
  forgetFingerprint(block);
  block.attrs.updated = nextStamp(block.attrs.updated, now);
  block.attrs.updatedBy = by;
}

/** Gives a new block its system attributes. */
export function stampNew(block: Block, by: string, now: Date = new Date()): void {
  const stamp = now.toISOString();
  block.attrs.created = block.attrs.created ?? stamp;
  block.attrs.updated = stamp;
  block.attrs.updatedBy = by;
}

/**
 * Marks the containers a change happened inside (a list, a quote, a callout, not the document, which its
 * write marks): their `updated` moves on too, so that an update, move or delete of a container with the
 * `updated` read before is refused (CONFLICT) once anything inside it changed, instead of replacing a
 * person's edit of one of its children.
 */
export function touchContainers(blocks: readonly Block[], by: string, now: Date = new Date()): void {
  for (const block of blocks) if (block.type !== 'document') touch(block, by, now);
}
