import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { killCycles } from '../../../bench/kill-cycle.js';
import type { Acknowledged } from '../../../bench/kill-ledger.js';
import { CLI } from '../../helpers/cli-process.js';
import { useHarness } from '../../helpers/harness.js';

/**
 * `quire serve` (built) SIGKILLed while clients append, update, delete and move blocks and create, move,
 * rename and remove documents over HTTP: after each restart every acknowledged change is in the files, no
 * block or document is in two, the index equals a rebuild and reports no problem, and nothing temporary
 * is left (bench/kill-cycle.ts; bench/kill-writes.ts makes 30).
 */
describe('a kernel killed under concurrent writes', () => {
  const { tempDir } = useHarness();
  const seed = Date.now() % 1_000_000;

  it(`keeps every acknowledged change, kill after kill (seed ${seed})`, async () => {
    // Changes of every kind, so that every kind is checked after the kills. The rarer changes of documents
    // come about once a kill (9 of 100 changes, and only once a client has made a document of its own),
    // fewer on a loaded machine: the kills are held back until there is one of each.
    const everyKind = (counts: Acknowledged): boolean => counts.appends > 30
      && Math.min(counts.updates, counts.deletes, counts.blockMoves, counts.documents) > 0
      && counts.documentMoves + counts.renames + counts.removes > 0;
    const report = await killCycles({
      cli: CLI, folder: await tempDir('quire-kills-'), kills: 3, clients: 12, documents: 4, killAfterMs: [400, 1500], seed,
      killOnceAcknowledged: everyKind,
    });
    expect(report.failures).toEqual([]);
    // Not a test of nothing: changes of every kind were acknowledged before the kills.
    const { appends, updates, deletes, blockMoves, documents, documentMoves, renames, removes } = report.acknowledged;
    expect(appends).toBeGreaterThan(30);
    expect(Math.min(updates, deletes, blockMoves, documents)).toBeGreaterThan(0);
    expect(documentMoves + renames + removes).toBeGreaterThan(0);
  }, 180_000);

  it('is checked closely enough to see one acknowledged block taken out of its file (the control)', async () => {
    let removed = '';
    const report = await killCycles({
      cli: CLI, folder: await tempDir('quire-kills-'), kills: 1, clients: 6, documents: 2, killAfterMs: [600, 800], seed,
      // Between the kill and the restart, a block of a document made before the clients started
      // goes from its file, and the journals (which would write it back) go too.
      afterKill: async (workspace) => {
        await rm(join(workspace, '.quire', 'journal'), { recursive: true, force: true });
        const data = join(workspace, 'data');
        // Every notebook's top documents (the cycle's scratch and import notebooks are there too).
        const notebooks = (await readdir(data, { withFileTypes: true })).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
        const tops = (await Promise.all(notebooks.map(async (notebook) => (await readdir(join(data, notebook))).map((name) => join(data, notebook, name))))).flat();
        for (const file of tops) {
          // Folders of child documents, and the notebook's own settings, are not documents.
          const name = basename(file);
          if (!name.endsWith('.json') || name.startsWith('.')) continue;
          const doc = JSON.parse(await readFile(file, 'utf8')) as { content: string; children: { id: string; content: string }[] };
          if (doc.content !== 'Document 0') continue;
          // One of its first blocks, which no client moves or deletes (blocks moved in may be anywhere).
          const at = doc.children.findIndex((block) => block.content.startsWith('p-0-'));
          removed = doc.children.splice(at, 1)[0]!.id;
          await writeFile(file, JSON.stringify(doc));
        }
      },
    });
    expect(removed).not.toBe('');
    expect(report.failures.filter((failure) => failure.includes(removed))).toEqual([expect.stringMatching(new RegExp(`^kill 1: acknowledged block ${removed} of \\S+ is missing$`))]);
  }, 120_000);
});
