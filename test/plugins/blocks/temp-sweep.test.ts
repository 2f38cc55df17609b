import { existsSync } from 'node:fs';
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sweepTempFiles } from '../../../plugins/blocks/temp-sweep.js';
import { useBlocks } from './blocks-harness.js';

const { boot, tempDir } = useBlocks();

interface Created { id: string }

/** Polls for a condition the kernel brings about in the background; fails if it never comes. */
async function eventually(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error('the condition never became true');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('temporary files left by killed writes', () => {
  it('are removed at start from data/, history/ and agent/sessions/ when older than the process, and nothing else is', async () => {
    const workspace = join(await tempDir(), 'workspace');
    const first = await boot({ workspace });
    const notebook = await first.act<Created>('notebook_create', { name: 'N' });
    const parent = await first.act<Created>('document_create', { notebook: notebook.id, title: 'Parent', markdown: 'text' });
    const child = await first.act<Created>('document_create', { notebook: notebook.id, title: 'Child', parentId: parent.id });
    await first.kernel.close();

    const folder = join(workspace, 'data', notebook.id);
    const history = join(workspace, 'history', parent.id);
    const session = join(workspace, 'agent', 'sessions', 's1');
    await mkdir(history, { recursive: true });
    await mkdir(session, { recursive: true });
    // What writeFileAtomic leaves when the process dies between creating its temporary file and the rename.
    const leftovers = [
      join(folder, `.${parent.id}.json.0123456789ab.tmp`),
      join(folder, '..notebook.json.ffffffffffff.tmp'),
      join(folder, parent.id, `.${child.id}.json.a1b2c3d4e5f6.tmp`),
      join(history, '.20240101120000-remove.json.00aa11bb22cc.tmp'),
      join(session, '.session.json.abcdefabcdef.tmp'),
    ];
    // Near misses: another length of hex, no leading dot, not hex, another ending, a folder.
    const kept = [
      join(folder, `.${parent.id}.json.0123456789a.tmp`),
      join(folder, `${parent.id}.json.0123456789ab.tmp`),
      join(folder, `.${parent.id}.json.0123456789ag.tmp`),
      join(folder, `.${parent.id}.json.0123456789ab.tmp.bak`),
      join(folder, 'notes.tmp'),
      join(history, '.draft.tmp'),
    ];
    // Left by an earlier process: older than this one.
    const old = new Date('2000-01-01T00:00:00Z');
    for (const path of [...leftovers, ...kept]) {
      await writeFile(path, 'partial');
      await utimes(path, old, old);
    }
    // Younger than this process: it may be a write of this process under way, so it is no leftover.
    const young = join(session, '.runtime.json.abcdefabcdef.tmp');
    await writeFile(young, 'in flight');
    kept.push(young);
    const folderLike = join(folder, '.x.json.0123456789ab.tmp');
    await mkdir(folderLike);

    const second = await boot({ workspace });
    expect((await second.act<{ problems: unknown[] }>('index_problems', {})).problems).toEqual([]);
    await eventually(() => leftovers.every((path) => !existsSync(path)));
    for (const path of [...kept, folderLike]) expect([path, existsSync(path)]).toEqual([path, true]);
    expect((await second.act<{ document: { content: string } }>('document_get', { id: parent.id })).document.content).toBe('Parent');
  });

  it('include folders that a removal killed midway had set aside, when changed before the process started', async () => {
    const root = await tempDir();
    const aside = join(root, 'nb', '.20261202000000-abcdefg.0123456789ab.removing');
    const notebookAside = join(root, '.20261202000000-nbnbnbn.a1b2c3d4e5f6.removing');
    const nearMisses = [join(root, 'nb', '20261202000000-abcdefg'), join(root, 'nb', '.20261202000000-abcdefg.0123456789a.removing'), join(root, '.x.0123456789ab.removed')];
    for (const folder of [aside, notebookAside, ...nearMisses]) {
      await mkdir(join(folder, 'child'), { recursive: true });
      await writeFile(join(folder, 'child', '20261202000000-ccccccc.json'), '{}');
    }
    // Set aside by this process (changed after it started): possibly a removal under way, left alone.
    expect(await sweepTempFiles(root, 0)).toEqual([]);
    expect(existsSync(aside)).toBe(true);
    // By an earlier one: swept whole; nothing else is.
    expect((await sweepTempFiles(root, Date.now() + 60_000)).sort()).toEqual([notebookAside, aside].sort());
    expect([aside, notebookAside].map(existsSync)).toEqual([false, false]);
    expect(nearMisses.map(existsSync)).toEqual([true, true, true]);
  });
});
