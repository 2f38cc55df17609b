import type { Stats } from 'node:fs';
import { stat } from 'node:fs/promises';

/** Small helpers of the index's sync with the files (workspace-sync.ts). */

/**
 * Many stats at once: one awaited after the other, each waited for a round trip to the thread pool
 * (10,000 documents took most of a second of the start-up sync, which every action waits for).
 */
const STATS_IN_FLIGHT = 64;

export async function statAll(files: readonly string[]): Promise<(Stats | undefined)[]> {
  const out = new Array<Stats | undefined>(files.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < files.length) {
      const i = next++;
      out[i] = await stat(files[i]!).catch(() => undefined);
    }
  };
  await Promise.all(Array.from({ length: Math.min(STATS_IN_FLIGHT, files.length) }, worker));
  return out;
}

export function countBlocks(root: { children?: unknown[] }): number {
  let count = 1;
  for (const child of (root.children ?? []) as { children?: unknown[] }[]) count += countBlocks(child);
  return count;
}

/** SQLite's storage itself failing (a full disk, I/O, memory): running again or per document changes nothing. */
export function storageFailure(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code === 'DISK_FULL' || /^SQLITE_(FULL|IOERR|NOMEM|CORRUPT|READONLY|CANTOPEN)/.test(code));
}
