import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { silentLogger, type Logger } from '../../../core/log.js';
import { openIndexDatabase } from '../../../plugins/blocks/index-schema.js';
import { WalCheckpointer } from '../../../plugins/blocks/wal-checkpointer.js';
import { useBlocks } from './blocks-harness.js';

const { boot, tempDir } = useBlocks();

/** Polls `check` every 50 ms until it holds or `ms` have passed; returns whether it held. */
async function eventually(check: () => boolean, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return check();
}

/** The checkpoint sequence number in a write-ahead log's header (big-endian, bytes 12-15). */
function walCheckpointSequence(file: string): number {
  const fd = openSync(file, 'r');
  try {
    const header = Buffer.alloc(16);
    readSync(fd, header, 0, 16, 0);
    return header.readUInt32BE(12);
  } finally {
    closeSync(fd);
  }
}

describe('checkpoints of the index', () => {
  it('copy the write-ahead log into the index file on a thread of their own, long before the log would make the writer do it', async () => {
    const { kernel, act } = await boot();
    const indexFile = join(kernel.workspace.root, 'index', 'quire.db');
    const { id: notebook } = await act<{ id: string }>('notebook_create', { name: 'Notes' });
    // About 300 KB of text: far below the 1,000 pages (4 MiB) at which the writer's own commit checkpoints.
    const markdown = Array.from({ length: 750 }, (_, i) => `Paragraph ${i} ${'of some length and words '.repeat(16)}`).join('\n\n');
    await act('document_create', { notebook, title: 'Long', markdown });
    const copied = await eventually(() => statSync(indexFile).size > 256 * 1024, 10_000);
    expect(copied).toBe(true);
    // Searches still see everything (the checkpoint changed where pages live, not what they hold).
    const found = await act<{ total: number }>('search_fulltext', { query: 'Paragraph' });
    expect(found.total).toBe(750);
  });

  it('keeps the log bounded under a steady stream of commits, which a checkpoint on another thread alone let grow', async () => {
    const folder = await tempDir();
    const file = join(folder, 'quire.db');
    const { db } = openIndexDatabase(file);
    const checkpointer = WalCheckpointer.start(db, file, silentLogger);
    try {
      db.exec('CREATE TABLE stream (payload BLOB)');
      const insert = db.prepare('INSERT INTO stream (payload) VALUES (randomblob(16000))');
      let largest = 0;
      // The log's checkpoint sequence (bytes 12-15 of its header) moves on each time the log restarts
      // from its beginning: what keeps it bounded. How large it gets meanwhile depends on how fast this
      // machine's disk copies it back, so that is the bench's business; here the restarts are counted.
      const restarts = new Set<number>();
      // Commits of 160 KB until the log has restarted twice, or 200 MB were written: with only the worker
      // checkpointing, the log never restarted and grew past 40 MiB in 4 s (155 MiB on a quiet machine).
      // Counted in bytes, not seconds, so that a loaded machine writing less gets as many chances.
      for (let written = 0; written < 200 * 2 ** 20 && restarts.size <= 2; written += 10 * 16_000) {
        for (let i = 0; i < 10; i++) insert.run();
        largest = Math.max(largest, statSync(`${file}-wal`).size);
        restarts.add(walCheckpointSequence(`${file}-wal`));
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      expect({ restarts: restarts.size > 2, largest }).toMatchObject({ restarts: true });
    } finally {
      await checkpointer.stop();
      db.close();
    }
  });

  it('hands checkpoints back to the writer when its worker cannot work', async () => {
    const folder = await tempDir();
    const { db } = openIndexDatabase(join(folder, 'quire.db'));
    const warnings: string[] = [];
    const log: Logger = { ...silentLogger, warn: (message) => void warnings.push(message), child: () => log };
    // The worker opens a file that is not there, fails, and the writer checkpoints again.
    const checkpointer = WalCheckpointer.start(db, join(folder, 'missing.db'), log);
    try {
      expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(4000);
      expect(await eventually(() => db.pragma('wal_autocheckpoint', { simple: true }) === 1000, 10_000)).toBe(true);
      expect(warnings).toEqual(['the index checkpoints on the main thread again: its checkpoint worker stopped']);
    } finally {
      await checkpointer.stop();
      db.close();
    }
  });
});
