import { rm } from 'node:fs/promises';
import { ConflictError, KernelError, NotFoundError, syncFolder } from '../../core/index.js';
import type { SnapshotRepo, SnapshotSummary } from './snapshot-repo.js';

/**
 * How long the agent's turn snapshots are kept (`retention` in the plugin's config). Each writing turn
 * takes two (before its first write and at its end), so a person who works with the agent daily
 * gathers hundreds a month, each record holding the whole file table.
 */
export interface Retention {
  /** Days a turn's snapshots are kept at least. */
  agentDays: number;
  /** The newest writing turns whose snapshots are kept whatever their age. */
  agentTurns: number;
}

export const DEFAULT_RETENTION: Retention = { agentDays: 30, agentTurns: 100 };

const DAY_MS = 24 * 60 * 60 * 1000;

/** The plugin's `retention` setting (validated by the manifest's config schema): undefined keeps every snapshot. */
export function retentionOf(config: Record<string, unknown>): Retention | undefined {
  const setting = config.retention as false | Partial<Retention> | undefined;
  if (setting === false) return undefined;
  // A key present but undefined (a config built in code) keeps its default.
  return { agentDays: setting?.agentDays ?? DEFAULT_RETENTION.agentDays, agentTurns: setting?.agentTurns ?? DEFAULT_RETENTION.agentTurns };
}

/**
 * The snapshots past the retention: those of agent turns that are older than `agentDays` (their newest
 * snapshot is) and not among the newest `agentTurns` turns. A turn's snapshots go together (undoing a
 * turn needs both), and none goes while one of them is tagged. A person's snapshots are never due.
 */
export function dueForRetention(summaries: readonly SnapshotSummary[], retention: Retention, now: number): string[] {
  const turns = new Map<string, SnapshotSummary[]>();
  for (const summary of summaries) {
    if (!summary.origin.startsWith('agent:')) continue;
    const turn = turns.get(summary.origin);
    if (turn) turn.push(summary);
    else turns.set(summary.origin, [summary]);
  }
  // A turn's time is its newest snapshot's. One whose times do not read (a record edited by hand) is
  // never due, and ranks as newest, so that it cannot push a readable turn out of the newest ones.
  const newestOf = (turn: SnapshotSummary[]) => turn.reduce((latest, summary) => {
    const at = Date.parse(summary.created);
    return Number.isNaN(at) || Number.isNaN(latest) ? Number.NaN : Math.max(latest, at);
  }, Number.NEGATIVE_INFINITY);
  const rankOf = (at: number) => (Number.isNaN(at) ? Number.POSITIVE_INFINITY : at);
  const newestFirst = [...turns.values()].map((turn) => ({ turn, newest: newestOf(turn) })).sort((a, b) => rankOf(b.newest) - rankOf(a.newest));
  const cutoff = now - retention.agentDays * DAY_MS;
  const due: string[] = [];
  newestFirst.forEach(({ turn, newest }, rank) => {
    if (rank < retention.agentTurns || Number.isNaN(newest) || newest >= cutoff) return;
    if (turn.some((summary) => summary.tags.length > 0)) return;
    for (const summary of turn) due.push(summary.id);
  });
  return due;
}

/**
 * Deletes snapshots a person named: every id is checked first (unknown, or tagged: refused, and then
 * nothing is deleted), then the records go. What only they referred to is left to a purge (the caller
 * queues one). Call where nothing else uses the repository (the plugin's repository queue).
 */
export async function deleteSnapshots(repo: SnapshotRepo, ids: readonly string[]): Promise<{ deleted: string[] }> {
  const known = new Map((await repo.list()).map((summary) => [summary.id, summary]));
  for (const id of ids) {
    repo.recordPath(id);
    const summary = known.get(id);
    if (!summary) throw new NotFoundError('NOT_FOUND', `No snapshot with id '${id}'; nothing was deleted`, { details: { id } });
    if (summary.tags.length > 0) {
      throw new ConflictError('CONFLICT', `Snapshot '${id}' is tagged (${summary.tags.join(', ')}): untag it first to delete it; nothing was deleted`, { details: { id, tags: summary.tags } });
    }
  }
  await removeRecords(repo, ids);
  return { deleted: [...ids] };
}

/**
 * Removes snapshot records, durably (the folder synced once after them). The index follows on its
 * next read, which drops every snapshot whose record is gone; a crash midway leaves some records
 * removed and the others whole, and their objects for the next purge.
 */
export async function removeRecords(repo: SnapshotRepo, ids: readonly string[]): Promise<void> {
  try {
    for (const id of ids) await rm(repo.recordPath(id), { force: true });
    await syncFolder(repo.records);
  } catch (error) {
    throw new KernelError('WORKSPACE_INVALID', `Could not delete every snapshot record (${(error as Error).message}); those still listed were not deleted`, { cause: error });
  }
  await repo.compactIndex();
}

/** A page of `snapshot_list`: newest first, optionally only one origin's, at most `limit`, older than `before`. */
export function pageOf(summaries: readonly SnapshotSummary[], query: { limit?: number; before?: string; origin?: string }): { snapshots: SnapshotSummary[]; total: number; next?: string } {
  const matching = query.origin === undefined ? summaries : summaries.filter((summary) => summary.origin.startsWith(query.origin!));
  let end = matching.length;
  if (query.before !== undefined) {
    const at = matching.findIndex((summary) => summary.id === query.before);
    if (at < 0) throw new NotFoundError('NOT_FOUND', `No snapshot with id '${query.before}' to list from (deleted since?): list again from the newest`, { details: { field: 'before', id: query.before } });
    end = at;
  }
  const start = Math.max(0, end - (query.limit ?? 200));
  const snapshots = matching.slice(start, end).reverse();
  return { snapshots, total: matching.length, ...(start > 0 ? { next: matching[start]!.id } : {}) };
}
