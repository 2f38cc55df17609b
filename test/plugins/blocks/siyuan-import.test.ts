import { copyFile, mkdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Block } from '../../../plugins/blocks/block-model.js';
import { REPO_ROOT } from '../../helpers/harness.js';
import { useBlocks } from './blocks-harness.js';

const { boot, tempDir } = useBlocks();
const FIXTURES = join(REPO_ROOT, 'test', 'fixtures', 'siyuan');
const ZH = '20200825162036-4dx365o';
const EN = '20200924101106-19z4kaa';
const JA = '20240530101000-xsbxokr';
const PNG = Buffer.from('89504e470d0a1a0a', 'hex');

interface Created { id: string }
interface Imported {
  flavor: string;
  documents: number;
  blocks: number;
  skipped: { path: string; reason: string }[];
  siyuan: { documents: number; ids: string; references: number; referencesOutside: number; assets: { linked: number; copied: number; missing: string[] }; problems: { file: string; problem: string }[] };
}

/** A SiYuan notebook as its ".sy.zip" export holds it: `<notebook>/<id>.sy`, children in `<id>/`, `assets/` beside. */
async function writeExport(): Promise<string> {
  const root = await tempDir('quire-siyuan-');
  const notebook = join(root, '20210808180117-czj9bvb');
  await mkdir(join(notebook, '.siyuan'), { recursive: true });
  await writeFile(join(notebook, '.siyuan', 'conf.json'), '{"name":"Guide"}');
  await mkdir(join(notebook, ZH));
  await copyFile(join(FIXTURES, `${ZH}.sy`), join(notebook, `${ZH}.sy`));
  await copyFile(join(FIXTURES, `${EN}.sy`), join(notebook, ZH, `${EN}.sy`));
  await copyFile(join(FIXTURES, `${JA}.sy`), join(notebook, `${JA}.sy`));
  await mkdir(join(root, 'assets'));
  await writeFile(join(root, 'assets', 'siyuan-128-20210604092205-djd749a.png'), PNG);
  return notebook;
}

function ids(block: Block, into: string[] = []): string[] {
  into.push(block.id);
  for (const child of block.children ?? []) ids(child, into);
  return into;
}

describe('SiYuan .sy import', () => {
  it('imports an export with its ids, hierarchy, references, attributes and assets kept, and says what it could not keep', async () => {
    const { kernel, act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'From SiYuan' });
    const folder = await writeExport();
    const result = await act<Imported>('import_markdown', { notebook: notebook.id, path: folder });
    expect(result.flavor).toBe('siyuan');
    expect(result.documents).toBe(3);
    expect(result.siyuan).toMatchObject({ documents: 3, ids: 'kept' });
    expect(result.siyuan.references).toBeGreaterThan(0);
    expect(result.siyuan.assets).toMatchObject({ copied: 1 });
    expect(await readFile(join(kernel.workspace.root, 'assets', 'siyuan-128-20210604092205-djd749a.png'))).toEqual(PNG);

    // The hierarchy and titles: the English document is a child of the Chinese one.
    const top = await act<{ documents: { id: string; title: string }[] }>('document_list', { notebook: notebook.id });
    expect(top.documents.map((doc) => doc.id).sort()).toEqual([ZH, JA].sort());
    const children = await act<{ documents: { id: string }[] }>('document_list', { notebook: notebook.id, parentId: ZH });
    expect(children.documents.map((doc) => doc.id)).toEqual([EN]);

    // Every block id of the file is the block's id here; references in the index point at them.
    const source = JSON.parse(await readFile(join(FIXTURES, `${EN}.sy`), 'utf8')) as { Properties: { title: string } };
    const en = (await act<{ document: Block }>('document_get', { id: EN })).document;
    expect(en.content).toBe(source.Properties.title);
    const syIds = [...(await readFile(join(FIXTURES, `${EN}.sy`), 'utf8')).matchAll(/"ID": "(\d{14}-[0-9a-z]{7})"/g)].map((m) => m[1]!);
    const kept = new Set(ids(en));
    expect(syIds.filter((id) => kept.has(id)).length).toBeGreaterThan(syIds.length * 0.8);
    const ja = await act<{ attrs: Record<string, string> }>('document_info', { id: JA });
    expect(Object.keys(ja.attrs).some((key) => key.startsWith('custom-'))).toBe(true);
    const inside = en.children!.flatMap((block) => [block, ...(block.children ?? [])]).find((block) => /\(\(\d{14}-[0-9a-z]{7}/.test(block.content ?? ''));
    expect(inside).toBeDefined();
    const forward = await act<{ refs: unknown[] }>('ref_forward', { id: inside!.id });
    expect(forward.refs.length).toBeGreaterThan(0);
    // Their times: created from the SiYuan id, updated as SiYuan had it, not the day of the import.
    const stamped = en.children!.find((block) => block.id === '20210118104710-sb9ti9s')!;
    expect(stamped.attrs.created).toBe('2021-01-18T10:47:10.000Z');
    expect(en.attrs.created).toBe(`${EN.slice(0, 4)}-${EN.slice(4, 6)}-${EN.slice(6, 8)}T${EN.slice(8, 10)}:${EN.slice(10, 12)}:${EN.slice(12, 14)}.000Z`);
    expect(en.attrs.updated! < '2026-12-01').toBe(true);
  });

  it('does not follow a link in the export\'s assets out of it: the file it points at is reported missing, not copied', async () => {
    const { kernel, act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'From SiYuan' });
    const folder = await writeExport();
    const secret = join(await tempDir('quire-secret-'), 'id_rsa');
    await writeFile(secret, 'PRIVATE KEY');
    const asset = join(folder, '..', 'assets', 'siyuan-128-20210604092205-djd749a.png');
    await rm(asset);
    await symlink(secret, asset);
    const result = await act<Imported>('import_markdown', { notebook: notebook.id, path: folder });
    expect(result.siyuan.assets).toMatchObject({ copied: 0, missing: ['assets/siyuan-128-20210604092205-djd749a.png'] });
    expect(await stat(join(kernel.workspace.root, 'assets', 'siyuan-128-20210604092205-djd749a.png')).then(() => true, () => false)).toBe(false);
  });

  it('imports a folder holding the same export twice: each copy\'s blocks get ids of their own', async () => {
    const { act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'Two copies' });
    const parent = await tempDir('quire-siyuan-two-');
    for (const name of ['first', 'second']) {
      await mkdir(join(parent, name));
      await copyFile(join(FIXTURES, `${EN}.sy`), join(parent, name, `${EN}.sy`));
    }
    const result = await act<Imported>('import_markdown', { notebook: notebook.id, path: parent, flavor: 'siyuan' });
    expect(result.siyuan.ids).toBe('renewed');
    const docIds: string[] = [];
    const walk = async (parentId?: string): Promise<void> => {
      const listed = await act<{ documents: { id: string }[] }>('document_list', { notebook: notebook.id, ...(parentId ? { parentId } : {}) });
      for (const doc of listed.documents) {
        docIds.push(doc.id);
        await walk(doc.id);
      }
    };
    await walk();
    const all = await Promise.all(docIds.map(async (id) => (await act<{ document: Block }>('document_get', { id })).document));
    const everyId = all.flatMap((doc) => ids(doc));
    expect(all.length).toBeGreaterThanOrEqual(2);
    expect(everyId.length).toBeGreaterThan(2 * all.length);
    expect(new Set(everyId).size).toBe(everyId.length);
  });

  it('does not follow an assets folder that is itself a link out of the export', async () => {
    const { kernel, act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'From SiYuan' });
    const folder = await writeExport();
    const elsewhere = await tempDir('quire-elsewhere-');
    await writeFile(join(elsewhere, 'siyuan-128-20210604092205-djd749a.png'), 'PRIVATE');
    await rm(join(folder, '..', 'assets'), { recursive: true });
    await symlink(elsewhere, join(folder, '..', 'assets'));
    const result = await act<Imported>('import_markdown', { notebook: notebook.id, path: folder });
    expect(result.siyuan.assets).toMatchObject({ copied: 0 });
    expect(await stat(join(kernel.workspace.root, 'assets', 'siyuan-128-20210604092205-djd749a.png')).then(() => true, () => false)).toBe(false);
  });

  it('imported twice: the second copy gets new ids throughout, its references following them', async () => {
    const { act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'Twice' });
    const folder = await writeExport();
    await act('import_markdown', { notebook: notebook.id, path: folder });
    const again = await act<Imported>('import_markdown', { notebook: notebook.id, path: folder });
    expect(again.siyuan.ids).toBe('renewed');
    const top = await act<{ documents: { id: string; title: string }[] }>('document_list', { notebook: notebook.id });
    expect(top.documents).toHaveLength(4);
    const copies = top.documents.filter((doc) => doc.id !== ZH && doc.id !== JA);
    expect(copies).toHaveLength(2);
    const copyId = copies.find((doc) => doc.title === top.documents.find((d) => d.id === ZH)!.title)!.id;
    // The copy's child document is under the copy, not under the first import's document.
    const underCopy = await act<{ documents: { id: string }[] }>('document_list', { notebook: notebook.id, parentId: copyId });
    const underOriginal = await act<{ documents: { id: string }[] }>('document_list', { notebook: notebook.id, parentId: ZH });
    expect([underCopy.documents.length, underOriginal.documents.map((doc) => doc.id)]).toEqual([1, [EN]]);
    expect(underCopy.documents[0]!.id).not.toBe(EN);
    const copy = (await act<{ document: Block }>('document_get', { id: copyId })).document;
    const original = (await act<{ document: Block }>('document_get', { id: ZH })).document;
    const originalIds = new Set(ids(original));
    expect(ids(copy).filter((id) => originalIds.has(id))).toEqual([]);
    // A reference between blocks of the copy points into the copy, not at the first import.
    const text = JSON.stringify(copy);
    const referenced = [...text.matchAll(/\(\((\d{14}-[0-9a-z]{7})/g)].map((m) => m[1]!);
    expect(referenced.filter((id) => originalIds.has(id))).toEqual([]);
  });

  it('imported again into another notebook: renewed ids, its hierarchy whole', async () => {
    const { act } = await boot();
    const first = await act<Created>('notebook_create', { name: 'First' });
    const second = await act<Created>('notebook_create', { name: 'Second' });
    const folder = await writeExport();
    await act('import_markdown', { notebook: first.id, path: folder });
    const again = await act<Imported>('import_markdown', { notebook: second.id, path: folder });
    expect([again.siyuan.ids, again.documents]).toEqual(['renewed', 3]);
    const top = await act<{ documents: { id: string; childDocuments: number }[] }>('document_list', { notebook: second.id });
    expect(top.documents.map((doc) => doc.childDocuments).sort()).toEqual([0, 1]);
  });

  it('a single .sy file, and a file that is not a SiYuan document, which becomes an empty document with the reason', async () => {
    const { act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'One' });
    const one = await act<Imported>('import_markdown', { notebook: notebook.id, path: join(FIXTURES, `${JA}.sy`) });
    expect([one.flavor, one.documents, one.siyuan.ids]).toEqual(['siyuan', 1, 'kept']);
    const folder = await tempDir('quire-siyuan-bad-');
    await writeFile(join(folder, '20240101000000-aaaaaaa.sy'), '{"Type":"NodeParagraph"}');
    const bad = await act<Imported>('import_markdown', { notebook: notebook.id, path: folder });
    expect(bad.documents).toBe(1);
    expect(bad.siyuan.problems).toEqual([{ file: '20240101000000-aaaaaaa.sy', problem: expect.stringContaining('Not a SiYuan document') }]);
  });
});
