import { existsSync } from 'node:fs';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { DraftBlock } from '../../../plugins/blocks/block-model.js';
import { markdownToBlocks } from '../../../plugins/blocks/markdown-in.js';
import type { MarkdownFileParser } from '../../../plugins/blocks/markdown-parser.js';
import { REPO_ROOT, useHarness } from '../../helpers/harness.js';

const BUILT = join(REPO_ROOT, 'dist', 'plugins', 'blocks');

function withoutIds(blocks: DraftBlock[]): unknown[] {
  return blocks.map(({ id: _id, children, ...rest }) => ({ ...rest, ...(children ? { children: withoutIds(children) } : {}) }));
}

/** Threads of this process, from Linux's /proc: a worker is one more. */
async function threadCount(): Promise<number> {
  return (await readdir('/proc/self/task')).length;
}

describe('the import parser on a worker thread (the built kernel)', () => {
  const { tempDir } = useHarness();

  it('parses files on a worker exactly as the parser does in process, and reports files too large', async () => {
    expect(existsSync(join(BUILT, 'markdown-worker.js'))).toBe(true);
    const module = await import(pathToFileURL(join(BUILT, 'markdown-parser.js')).href) as { createMarkdownFileParser(): MarkdownFileParser };
    const parser = module.createMarkdownFileParser();
    const folder = await tempDir();
    const sources = ['# One\n\n- a\n  - b\n', '> [!TIP]\n> text #tag#\n\n| x |\n| - |\n| 1 |\n', 'x'.repeat(500)];
    const paths = await Promise.all(sources.map(async (text, i) => { const path = join(folder, `${i}.md`); await writeFile(path, text); return path; }));
    const before = await threadCount();
    try {
      const results = await parser.parseFiles(paths, 200);
      expect(await threadCount()).toBeGreaterThan(before);
      expect(results.slice(0, 2).map((result) => result.ok ? withoutIds(result.drafts) : result))
        .toEqual(sources.slice(0, 2).map((text) => withoutIds(markdownToBlocks(text, () => 'x'))));
      expect(results[2]).toEqual({ ok: false, reason: 'larger than 200 characters' });
    } finally {
      await parser.close();
    }
  });
});
