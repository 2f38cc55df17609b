import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { CLI } from '../../helpers/cli-process.js';
import { caught, REPO_ROOT } from '../../helpers/harness.js';
import { useBlocks, type Act } from './blocks-harness.js';

type Created = { id: string };

async function notesFolder(folder: string, count: number, word: string, withChildren = true): Promise<string> {
  await mkdir(folder, { recursive: true });
  for (let i = 0; i < count; i++) {
    const name = `${word}-${String(i).padStart(4, '0')}`;
    await writeFile(join(folder, `${name}.md`), `# ${word} ${i}\n\n${'A paragraph of about a line of text. '.repeat(10)}${word}\n`);
    // Every tenth note has a folder of two notes below it: documents with children.
    if (withChildren && i % 10 === 0) await notesFolder(join(folder, name), 2, `${word}${i}child`, false);
  }
  return folder;
}

interface Listed { id: string; title: string }

/** Every document of the notebook, at any depth, as the kernel lists them. */
async function allDocuments(act: Act, notebook: string, parentId?: string): Promise<Listed[]> {
  const { documents } = await act<{ documents: Listed[] }>('document_list', { notebook, ...(parentId ? { parentId } : {}) });
  const below = await Promise.all(documents.map((doc) => allDocuments(act, notebook, doc.id)));
  return [...documents, ...below.flat()];
}

const documentIds = async (act: Act, notebook: string): Promise<string[]> => (await allDocuments(act, notebook)).map((doc) => doc.id).sort();

/** Every .json below `folder` (documents), as data/-relative paths. */
async function documentFiles(folder: string): Promise<string[]> {
  return (await readdir(folder, { recursive: true })).filter((name) => name.endsWith('.json') && !name.endsWith('.notebook.json')).sort();
}

describe('an import cut short by a crash', () => {
  const harness = useBlocks();

  it('is undone at the next start, so that running it again makes each document once', async () => {
    const workspace = join(await harness.tempDir(), 'ws');
    let { kernel, act } = await harness.boot({ workspace });
    const notebook = await act<Created>('notebook_create', { name: 'Notes' });
    const before = await act<Created>('document_create', { notebook: notebook.id, title: 'Before', markdown: 'written before the import' });
    const source = await notesFolder(join(await harness.tempDir(), 'vault'), 1500, 'imported');
    await kernel.close();
    const data = join(workspace, 'data', notebook.id);
    const child = spawn(process.execPath, [CLI, 'import', source, '--notebook', notebook.id, '--workspace', workspace], { cwd: REPO_ROOT, stdio: 'ignore' });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    // Killed once some steps of the import are written, long before its last.
    while (child.exitCode === null && (await documentFiles(data)).length < 200) await new Promise((resolve) => setTimeout(resolve, 2));
    child.kill('SIGKILL');
    await exited;
    const written = (await documentFiles(data)).length;
    expect(written, 'the import was killed midway').toBeGreaterThan(1);
    expect(written, 'the import was killed midway').toBeLessThan(1 + 1650);
    ({ kernel, act } = await harness.boot({ workspace }));
    expect(await documentFiles(data)).toEqual([`${before.id}.json`]);
    expect(await documentIds(act, notebook.id)).toEqual([before.id]);
    expect((await act<{ total: number }>('search_fulltext', { query: 'imported' })).total).toBe(0);
    expect(await readdir(join(workspace, '.quire', 'journal', 'imports'))).toEqual([]);
    // Run again, it makes each document once; the index is what a rebuild gives.
    const again = await act<{ documents: number }>('import_markdown', { notebook: notebook.id, path: source });
    expect(again.documents).toBe(1500 + 150 * 2);
    expect(await readdir(join(workspace, '.quire', 'journal', 'imports'))).toEqual([]);
    expect((await documentFiles(data)).length).toBe(1 + 1800);
    await act('index_rebuild', {});
    expect((await act<{ problems: unknown[] }>('index_problems', {})).problems).toEqual([]);
    expect((await act<{ documents: unknown[] }>('document_list', { notebook: notebook.id })).documents.length).toBe(1 + 1500);
  }, 120_000);

  it('that fails in a step leaves none of that step, says how many documents stay, and keeps them across a start', async () => {
    const workspace = join(await harness.tempDir(), 'ws');
    const { kernel, act } = await harness.boot({ workspace });
    const notebook = await act<Created>('notebook_create', { name: 'Notes' });
    const source = await notesFolder(join(await harness.tempDir(), 'vault'), 100, 'note', false);
    // A real failure of SQLite in the second step's index transaction (documents 64 to 99).
    const index = new Database(join(workspace, 'index', 'quire.db'));
    index.exec(`CREATE TRIGGER poison BEFORE INSERT ON documents WHEN NEW.title = 'note-0070' BEGIN SELECT RAISE(ABORT, 'poisoned row'); END`);
    const failed = await caught(act('import_markdown', { notebook: notebook.id, path: source }));
    expect(failed.message).toMatch(/poisoned row/);
    expect(failed.message).toContain('64 of 100 documents were imported before it, and stay; the rest was not written');
    const data = join(workspace, 'data', notebook.id);
    expect((await documentFiles(data)).length).toBe(64);
    expect(await documentIds(act, notebook.id)).toHaveLength(64);
    expect(await readdir(join(workspace, '.quire', 'journal', 'imports'))).toEqual([]);
    index.exec('DROP TRIGGER poison');
    index.close();
    await kernel.close();
    const again = await harness.boot({ workspace });
    expect(await documentIds(again.act, notebook.id)).toHaveLength(64);
    expect((await again.act<{ problems: unknown[] }>('index_problems', {})).problems).toEqual([]);
  });

  it('keeps what changed since the import wrote it, and a document with documents below it that the import did not write', async () => {
    const workspace = join(await harness.tempDir(), 'ws');
    const { kernel, act } = await harness.boot({ workspace });
    const notebook = await act<Created>('notebook_create', { name: 'Notes' });
    const source = await notesFolder(join(await harness.tempDir(), 'vault'), 3, 'note');
    await act('import_markdown', { notebook: notebook.id, path: source });
    const ids = await documentIds(act, notebook.id);
    const titled = async (title: string) => (await allDocuments(act, notebook.id)).find((doc) => doc.title === title)!.id;
    const [untouched, edited, parent, childOfParent] = [await titled('note-0001'), await titled('note-0002'), await titled('note-0000'), await titled('note0child-0000')];
    const sibling = await titled('note0child-0001');
    // Written after the import: an edit of one of its documents, and a document of the person's below another.
    const importedText = async (id: string, path: string) => ({ path, sha256: createHash('sha256').update(await readFile(join(workspace, 'data', ...path.split('/')))).digest('hex'), id });
    const files = [
      await importedText(parent, `${notebook.id}/${parent}.json`),
      await importedText(childOfParent, `${notebook.id}/${parent}/${childOfParent}.json`),
      await importedText(sibling, `${notebook.id}/${parent}/${sibling}.json`),
      await importedText(untouched, `${notebook.id}/${untouched}.json`),
      await importedText(edited, `${notebook.id}/${edited}.json`),
    ];
    await act('block_append', { parentId: edited, markdown: 'an acknowledged edit made while the import ran' });
    const mine = await act<Created>('document_create', { notebook: notebook.id, parentId: childOfParent, title: 'Mine', markdown: 'the person\'s own' });
    await kernel.close();
    // The records of that import left behind, as a kill before its answer leaves them: two steps, and
    // beside them records that do not read as steps, which undo nothing.
    const records = join(workspace, '.quire', 'journal', 'imports', '20261202000000000-0123abcd');
    await mkdir(records, { recursive: true });
    await writeFile(join(records, '00000000.json'), JSON.stringify({ source, files: files.slice(0, 3).map(({ path, sha256 }) => ({ path, sha256 })) }));
    await writeFile(join(records, '00000001.json'), JSON.stringify({ source, files: files.slice(3).map(({ path, sha256 }) => ({ path, sha256 })) }));
    await writeFile(join(records, '00000002.json'), 'null');
    await writeFile(join(records, '00000003.json'), '{"files": [{"path": "../../outside.json", "sha256": "0"}]');
    const editedText = await readFile(join(workspace, 'data', notebook.id, `${edited}.json`), 'utf8');
    const again = await harness.boot({ workspace });
    const left = await documentIds(again.act, notebook.id);
    // Gone: the untouched one and the sibling with nothing below it. Kept: the edited one, and the
    // chain above the person's document, which would otherwise be left without its parents.
    expect(left).toEqual([edited, parent, childOfParent, mine.id, ...ids.filter((id) => ![untouched, edited, parent, childOfParent, sibling].includes(id))].sort());
    expect(left).not.toContain(untouched);
    expect(left).not.toContain(sibling);
    expect(await readFile(join(workspace, 'data', notebook.id, `${edited}.json`), 'utf8')).toBe(editedText);
    expect(await readdir(join(workspace, '.quire', 'journal', 'imports'))).toEqual([]);
    await again.act('index_rebuild', {});
    expect((await again.act<{ problems: unknown[] }>('index_problems', {})).problems).toEqual([]);
  });
});
