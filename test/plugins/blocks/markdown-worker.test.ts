import { existsSync } from 'node:fs';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { prepareImport, type ImportWork, type PreparedDocument } from '../../../plugins/blocks/import-rows.js';
import type { MarkdownFileParser } from '../../../plugins/blocks/markdown-parser.js';
import { REPO_ROOT, useHarness } from '../../helpers/harness.js';

const BUILT = join(REPO_ROOT, 'dist', 'plugins', 'blocks');

/** Threads of this process, from Linux's /proc: a worker is one more. */
async function threadCount(): Promise<number> {
  return (await readdir('/proc/self/task')).length;
}

describe('the import parser on a worker thread (the built kernel)', () => {
  const { tempDir } = useHarness();

  it('prepares an import on a worker exactly as it is prepared in process, and reports files too large', async () => {
    expect(existsSync(join(BUILT, 'markdown-worker.js'))).toBe(true);
    const module = await import(pathToFileURL(join(BUILT, 'markdown-parser.js')).href) as { createMarkdownFileParser(): MarkdownFileParser };
    const parser = module.createMarkdownFileParser();
    const folder = await tempDir();
    const sources = ['# One\n\n- a\n  - b\n', '> [!TIP]\n> text #tag#\n\n| x |\n| - |\n| 1 |\n', 'x'.repeat(500)];
    const paths = await Promise.all(sources.map(async (text, i) => { const path = join(folder, `${i}.md`); await writeFile(path, text); return path; }));
    const work: ImportWork = { docs: paths.map((path, i) => ({ id: `2024010100000${i}-aaaaaaa`, title: `doc ${i}`, path })), maxChars: 200, by: 'person:test', now: '2024-01-01T00:00:00.000Z' };
    // What a block row holds but its id, its parent's id and its fingerprint (which cover the ids).
    const shape = (docs: PreparedDocument[]) => docs.map((doc) => ({ problem: doc.problem, blocks: doc.blocks.slice(1).map((block) => block.values.slice(2, 10)) }));
    const before = await threadCount();
    try {
      const onWorker = await parser.prepareImport(work);
      expect(await threadCount()).toBeGreaterThan(before);
      expect(shape(onWorker)).toEqual(shape(prepareImport(work)));
      expect(onWorker[2]!.problem).toBe('larger than 200 characters');
      expect(onWorker[0]!.blocks.length).toBeGreaterThan(3);
    } finally {
      await parser.close();
    }
  });
});
