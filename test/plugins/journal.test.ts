import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI } from '../helpers/cli-process.js';
import { REPO_ROOT } from '../helpers/harness.js';
import { useBlocks, type Act } from './blocks/blocks-harness.js';

type Created = { id: string };

/** data/ as path → SHA-256, without the kernel's temporary files. */
async function stateOf(dataDir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await readdir(dataDir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || entry.name.endsWith('.tmp')) continue;
    const path = join(entry.parentPath, entry.name);
    out[relative(dataDir, path).split(sep).join('/')] = createHash('sha256').update(await readFile(path)).digest('hex');
  }
  return out;
}

async function notesFolder(folder: string, count: number, word: string): Promise<string> {
  await mkdir(folder, { recursive: true });
  for (let i = 0; i < count; i++) await writeFile(join(folder, `${word}-${String(i).padStart(4, '0')}.md`), `# ${word} ${i}\n\n${'A paragraph of about a line of text. '.repeat(10)}\n`);
  return folder;
}

const documentCount = async (act: Act, notebook: string) => (await act<{ documents: unknown[] }>('document_list', { notebook })).documents.length;

describe('changes of several files survive a crash whole', () => {
  const harness = useBlocks();

  it('finishes a snapshot rollback killed midway at the next start: the notes are the snapshot\'s, never a mix', async () => {
    const workspace = join(await harness.tempDir(), 'ws');
    let { kernel, act } = await harness.boot({ workspace });
    const first = await act<Created>('notebook_create', { name: 'First' });
    await act('import_markdown', { notebook: first.id, path: await notesFolder(join(await harness.tempDir(), 'a'), 300, 'alpha') });
    const before = await act<Created>('snapshot_create', { memo: 'A' });
    const stateA = await stateOf(kernel.workspace.dataDir);
    await act('notebook_remove', { id: first.id });
    const second = await act<Created>('notebook_create', { name: 'Second' });
    await act('import_markdown', { notebook: second.id, path: await notesFolder(join(await harness.tempDir(), 'b'), 300, 'beta') });
    const after = await act<Created>('snapshot_create', { memo: 'B' });
    const stateB = await stateOf(kernel.workspace.dataDir);
    await kernel.close();
    const journalDir = join(workspace, '.quire', 'journal', 'snapshots');
    for (const delayMs of [0, 25]) {
      const child = spawn(process.execPath, [CLI, 'snapshot', 'rollback', before.id, '--workspace', workspace], { cwd: REPO_ROOT, stdio: 'ignore' });
      const exited = new Promise((resolve) => child.on('exit', resolve));
      // Killed once the rollback has begun putting files back: a file of the first notebook is there again
      // (not a temporary file a killed write may have left in its folder).
      const putBack = async () => (await readdir(join(workspace, 'data', first.id)).catch(() => [] as string[])).some((name) => !name.endsWith('.tmp'));
      while (child.exitCode === null && !(await putBack())) await new Promise((resolve) => setTimeout(resolve, 1));
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      child.kill('SIGKILL');
      await exited;
      ({ kernel, act } = await harness.boot({ workspace }));
      await act('index_rebuild', {});
      const state = await stateOf(kernel.workspace.dataDir);
      expect(state).toEqual(stateA);
      expect(existsSync(join(kernel.workspace.dataDir, second.id))).toBe(false);
      expect(await documentCount(act, first.id)).toBe(300);
      expect((await readdir(journalDir)).filter((name) => name.endsWith('.json'))).toEqual([]);
      // Back to B for the next round.
      await act('snapshot_rollback', { id: after.id });
      expect(await stateOf(kernel.workspace.dataDir)).toEqual(stateB);
      await kernel.close();
    }
  }, 120_000);

  it('finishes a journaled rollback whose files were half written when the process died', async () => {
    const workspace = join(await harness.tempDir(), 'ws');
    const { kernel, act } = await harness.boot({ workspace });
    const notebook = await act<Created>('notebook_create', { name: 'Notes' });
    await act('import_markdown', { notebook: notebook.id, path: await notesFolder(join(await harness.tempDir(), 'a'), 40, 'alpha') });
    const snapshot = await act<{ id: string; files: number }>('snapshot_create', { memo: 'A' });
    const stateA = await stateOf(kernel.workspace.dataDir);
    const record = JSON.parse(await readFile(join(workspace, 'repo', 'snapshots', `${snapshot.id}.json`), 'utf8')) as { files: Record<string, { hash: string }> };
    const docs = (await act<{ documents: { id: string }[] }>('document_list', { notebook: notebook.id })).documents;
    for (const doc of docs.slice(0, 20)) await act('document_rename', { id: doc.id, title: 'changed' });
    await kernel.close();
    // The journal as the rollback writes it, and only the first half of its files put back before the "crash".
    const changed = Object.keys(stateA).filter((path) => path.endsWith('.json') && !path.endsWith('.notebook.json'));
    const intent = { label: `rollback to snapshot ${snapshot.id}`, writes: changed.map((path) => ({ path, hash: record.files[path]!.hash })), removes: [] };
    await mkdir(join(workspace, '.quire', 'journal', 'snapshots'), { recursive: true });
    await writeFile(join(workspace, '.quire', 'journal', 'snapshots', '20261130000000-aaaaaaa.json'), JSON.stringify(intent));
    const again = await harness.boot({ workspace });
    await again.act('index_rebuild', {});
    expect(await stateOf(again.kernel.workspace.dataDir)).toEqual(stateA);
    const titles = (await again.act<{ documents: { title: string }[] }>('document_list', { notebook: notebook.id })).documents.map((doc) => doc.title);
    expect(titles).not.toContain('changed');
  });

  it('answers reads at the next start only once a rollback a crash cut short is finished: never part old, part new', async () => {
    const workspace = join(await harness.tempDir(), 'ws');
    const { kernel, act } = await harness.boot({ workspace });
    const notebook = await act<Created>('notebook_create', { name: 'Notes' });
    await act('import_markdown', { notebook: notebook.id, path: await notesFolder(join(await harness.tempDir(), 'a'), 60, 'alpha') });
    const snapshot = await act<{ id: string }>('snapshot_create', { memo: 'A' });
    const record = JSON.parse(await readFile(join(workspace, 'repo', 'snapshots', `${snapshot.id}.json`), 'utf8')) as { files: Record<string, { hash: string }> };
    const docs = (await act<{ documents: { id: string }[] }>('document_list', { notebook: notebook.id })).documents;
    for (const doc of docs) await act('document_rename', { id: doc.id, title: 'changed' });
    await kernel.close();
    // The rollback to A journaled, none of its files put back yet: as a kill right after the journal leaves it.
    const paths = Object.keys(record.files).filter((path) => path.endsWith('.json') && !path.endsWith('.notebook.json'));
    await mkdir(join(workspace, '.quire', 'journal', 'snapshots'), { recursive: true });
    await writeFile(join(workspace, '.quire', 'journal', 'snapshots', '20261130000000-ccccccc.json'), JSON.stringify({ label: `rollback to snapshot ${snapshot.id}`, writes: paths.map((path) => ({ path, hash: record.files[path]!.hash })), removes: [] }));
    const again = await harness.boot({ workspace });
    // Read at once, with no rebuild: every document as the snapshot has it.
    const [listed, first] = await Promise.all([
      again.act<{ documents: { title: string }[] }>('document_list', { notebook: notebook.id }),
      again.act<{ title: string }>('document_info', { id: docs[0]!.id }),
    ]);
    expect(listed.documents.filter((doc) => doc.title === 'changed')).toEqual([]);
    expect(first.title).not.toBe('changed');
  });

  it('finishes a document move cut between its two renames, so the children follow their document', async () => {
    const workspace = join(await harness.tempDir(), 'ws');
    const { kernel, act } = await harness.boot({ workspace });
    const notebook = await act<Created>('notebook_create', { name: 'Notes' });
    const other = await act<Created>('notebook_create', { name: 'Other' });
    const parent = await act<Created>('document_create', { notebook: notebook.id, title: 'Parent', markdown: 'parent text' });
    const child = await act<Created>('document_create', { notebook: notebook.id, parentId: parent.id, title: 'Child', markdown: 'child text' });
    await kernel.close();
    // The first rename done, the second not: as a kill between them leaves it, with the journal written before.
    const data = join(workspace, 'data');
    await rename(join(data, notebook.id, `${parent.id}.json`), join(data, other.id, `${parent.id}.json`));
    await mkdir(join(workspace, '.quire', 'journal', 'moves'), { recursive: true });
    await writeFile(join(workspace, '.quire', 'journal', 'moves', '20261130000000-bbbbbbb.json'), JSON.stringify({
      file: [`${notebook.id}/${parent.id}.json`, `${other.id}/${parent.id}.json`],
      folder: [`${notebook.id}/${parent.id}`, `${other.id}/${parent.id}`],
    }));
    const again = await harness.boot({ workspace });
    await again.act('index_rebuild', {});
    expect(existsSync(join(data, other.id, parent.id, `${child.id}.json`))).toBe(true);
    expect(existsSync(join(data, notebook.id, parent.id))).toBe(false);
    const problems = await again.act<{ problems: unknown[] }>('index_problems', {});
    expect(problems.problems).toEqual([]);
    expect(await documentCount(again.act, other.id)).toBe(1);
    expect((await again.act<{ id: string; notebook: string }>('document_info', { id: parent.id })).notebook).toBe(other.id);
    expect((await again.act<{ id: string; notebook: string }>('document_info', { id: child.id })).notebook).toBe(other.id);
  });

  it('finishes a block move between two documents cut between their two files, so the block is in one of them', async () => {
    const workspace = join(await harness.tempDir(), 'ws');
    const { kernel, act } = await harness.boot({ workspace });
    const notebook = await act<Created>('notebook_create', { name: 'Notes' });
    const target = await act<Created>('document_create', { notebook: notebook.id, title: 'Target', markdown: 'first\n\nsecond' });
    const source = await act<Created>('document_create', { notebook: notebook.id, title: 'Source', markdown: 'moving\n\nstaying' });
    const moving = (await act<{ children: { id: string }[] }>('block_get_children', { id: source.id })).children[0]!.id;
    const data = join(workspace, 'data', notebook.id);
    const [targetBefore, sourceBefore] = await Promise.all([target, source].map(({ id }) => readFile(join(data, `${id}.json`), 'utf8'))) as [string, string];
    await act('block_move', { id: moving, parentId: target.id });
    // A move that ends well leaves no record behind.
    expect(await readdir(join(workspace, '.quire', 'journal', 'together'))).toEqual([]);
    const [targetAfter, sourceAfter] = await Promise.all([target, source].map(({ id }) => readFile(join(data, `${id}.json`), 'utf8')));
    await kernel.close();
    // The target written, the source not: as a kill between the two files leaves them, the record written before.
    await writeFile(join(data, `${source.id}.json`), sourceBefore);
    expect(sourceBefore).toContain(moving);
    await writeFile(join(workspace, '.quire', 'journal', 'together', '20261202000000000-000000.json'), JSON.stringify({
      files: [
        { path: `${notebook.id}/${target.id}.json`, text: targetAfter, before: sha256(targetBefore) },
        { path: `${notebook.id}/${source.id}.json`, text: sourceAfter, before: sha256(sourceBefore) },
      ],
    }));
    const again = await harness.boot({ workspace });
    expect(await readFile(join(data, `${source.id}.json`), 'utf8')).not.toContain(moving);
    expect((await again.act<{ problems: unknown[] }>('index_problems', {})).problems).toEqual([]);
    expect((await again.act<{ documentId: string }>('block_get', { id: moving })).documentId).toBe(target.id);
    // Without the record, the block was in both files and the rebuild refused them.
    await again.act('index_rebuild', {});
    expect((await again.act<{ problems: unknown[] }>('index_problems', {})).problems).toEqual([]);
    expect(await readdir(join(workspace, '.quire', 'journal', 'together'))).toEqual([]);
    // A record that outlived its change (it could not be removed) never puts an older text back over a later write.
    await again.act('block_append', { parentId: source.id, markdown: 'written later' });
    const later = await readFile(join(data, `${source.id}.json`), 'utf8');
    await again.kernel.close();
    await writeFile(join(workspace, '.quire', 'journal', 'together', '20261202000000001-000000.json'), JSON.stringify({
      files: [{ path: `${notebook.id}/${source.id}.json`, text: sourceAfter, before: sha256(sourceAfter!) }],
    }));
    const third = await harness.boot({ workspace });
    expect(await readFile(join(data, `${source.id}.json`), 'utf8')).toBe(later);
    expect((await third.act<{ problems: unknown[] }>('index_problems', {})).problems).toEqual([]);
  });

  it('finishes a document removal cut after its children were set aside: the document and all below it go, no orphan stays', async () => {
    const workspace = join(await harness.tempDir(), 'ws');
    const { kernel, act } = await harness.boot({ workspace });
    const notebook = await act<Created>('notebook_create', { name: 'Notes' });
    const parent = await act<Created>('document_create', { notebook: notebook.id, title: 'Parent', markdown: 'parent text' });
    const child = await act<Created>('document_create', { notebook: notebook.id, parentId: parent.id, title: 'Child', markdown: 'child text' });
    await act<Created>('document_create', { notebook: notebook.id, parentId: child.id, title: 'Grandchild', markdown: 'grandchild text' });
    const kept = await act<Created>('document_create', { notebook: notebook.id, title: 'Kept', markdown: 'kept text' });
    // A removal that ends well leaves no record and nothing aside.
    const other = await act<Created>('document_create', { notebook: notebook.id, title: 'Other', markdown: 'other' });
    await act<Created>('document_create', { notebook: notebook.id, parentId: other.id, title: 'Other child' });
    await act('document_remove', { id: other.id });
    expect(await readdir(join(workspace, '.quire', 'journal', 'removals'))).toEqual([]);
    await kernel.close();
    const data = join(workspace, 'data', notebook.id);
    expect((await readdir(data)).filter((name) => name.includes('.removing'))).toEqual([]);
    // The children's folder set aside, the document's file not removed yet: as a kill between them leaves it.
    const aside = `.${parent.id}.0123456789ab.removing`;
    await rename(join(data, parent.id), join(data, aside));
    await writeFile(join(workspace, '.quire', 'journal', 'removals', '20261202000000000-000000.json'), JSON.stringify({
      file: `${notebook.id}/${parent.id}.json`, folder: `${notebook.id}/${parent.id}`, aside: `${notebook.id}/${aside}`,
    }));
    const again = await harness.boot({ workspace });
    expect((await readdir(data)).sort()).toEqual(['.notebook.json', `${kept.id}.json`]);
    expect((await again.act<{ documents: { id: string }[] }>('document_list', { notebook: notebook.id })).documents.map((doc) => doc.id)).toEqual([kept.id]);
    await again.act('index_rebuild', {});
    expect((await again.act<{ problems: unknown[] }>('index_problems', {})).problems).toEqual([]);
    expect(await readdir(join(workspace, '.quire', 'journal', 'removals'))).toEqual([]);
  });
});

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
