import * as fs from 'node:fs';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';

// A save landing right after the rebuild's read of a file: readFileSync reads, then the file changes.
const edits = vi.hoisted(() => ({ after: undefined as undefined | ((path: string) => void) }));
vi.mock('node:fs', async (original) => {
  const real = await original<typeof import('node:fs')>();
  return {
    ...real,
    readFileSync: ((path: fs.PathOrFileDescriptor, options?: unknown) => {
      const text = (real.readFileSync as (p: fs.PathOrFileDescriptor, o?: unknown) => string | Buffer)(path, options);
      edits.after?.(String(path));
      return text;
    }) as typeof real.readFileSync,
  };
});

const { prepareRebuild } = await import('../../../plugins/blocks/rebuild-rows.js');
const { documentBytes } = await import('../../../plugins/blocks/document-bytes.js');

describe('a document read for a rebuild', () => {
  const folders: string[] = [];
  afterEach(() => {
    edits.after = undefined;
    for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
  });

  it('keeps the size and time the file had when read, when it changed right after, so the next sync reads it again', () => {
    const folder = mkdtempSync(join(tmpdir(), 'quire-rebuild-'));
    folders.push(folder);
    const id = '20250101000000-aaaaaaa';
    const file = join(folder, `${id}.json`);
    const doc = (title: string) => documentBytes({ id, type: 'document', content: title, attrs: {}, children: [{ id: '20250101000000-bbbbbbb', type: 'paragraph', content: 'text', attrs: {} }] });
    writeFileSync(file, doc('Title'));
    const read = statSync(file);
    edits.after = (path) => {
      if (path !== file) return;
      edits.after = undefined;
      writeFileSync(file, doc('Title changed by hand'));
    };
    const [rebuilt] = prepareRebuild([{ id, file }]);
    expect(rebuilt).toMatchObject({ ok: true, size: read.size });
    expect(statSync(file).size).not.toBe(read.size);
  });
});
