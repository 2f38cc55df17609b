import type { ActionCall, Principal } from '../../core/index.js';
import type { Block } from './block-model.js';
import { forgetFingerprint } from './index-rows.js';

/**
 * Who changed a block, in the form DESIGN.md §3 fixes: `agent:<session>/<turn>/<call>` for the agent,
 * `person:<token name>` for people, so that "what did this turn change" is one query on `updated_by`;
 * `mcp:<token name>/<client>` for an MCP client that named itself.
 */
export function updatedBy(call: Pick<ActionCall, 'principal' | 'callId'>): string {
  const principal: Principal = call.principal;
  switch (principal.kind) {
    case 'agent':
      return principal.name.startsWith('agent:') ? principal.name : `agent:${principal.sessionId ?? '-'}/${principal.turnId ?? '-'}/${call.callId}`;
    case 'person': return `person:${principal.name}`;
    // With the client program it connected as: two clients on one token are two authors (history kept
    // one version for both, and the first one's edit, replaced by the second's, was in none).
    case 'mcp': return principal.client ? `mcp:${principal.name}/${principal.client.replace(/[^\p{L}\p{N} ._-]/gu, '_')}` : `mcp:${principal.name}`;
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

/**
 * Gives a new block its system attributes. `keepUpdated` (an import): the time of change its source
 * gave it (a SiYuan block's, a file's) is kept when it is a valid stamp no later than now, and its
 * creation is then no later than that; years of a person's history did not survive an import.
 */
export function stampNew(block: Block, by: string, now: Date = new Date(), keepUpdated = false): void {
  const stamp = now.toISOString();
  const kept = keepUpdated ? validPastStamp(block.attrs.updated, now) : undefined;
  const created = validPastStamp(block.attrs.created, now);
  block.attrs.updated = kept ?? stamp;
  block.attrs.created = created !== undefined && created <= block.attrs.updated ? created : kept ?? stamp;
  block.attrs.updatedBy = by;
}

/** An ISO 8601 stamp as the kernel writes them (with milliseconds, UTC), not after `now`. */
function validPastStamp(value: string | undefined, now: Date): string | undefined {
  if (value === undefined || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(value)) return undefined;
  const time = Date.parse(value);
  return Number.isNaN(time) || time > now.getTime() ? undefined : value;
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
