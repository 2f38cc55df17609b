import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, truncate, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newId } from '../../../core/ids.js';
import { silentLogger, type Logger } from '../../../core/log.js';
import { replaceFile } from '../../../core/fs/atomic-write.js';
import { WriteJournal } from '../../../plugins/blocks/write-journal.js';
import { useBlocks } from './blocks-harness.js';

interface Created { id: string }

describe('the document write journal', () => {
  const harness = useBlocks();

  /** A data folder with one notebook and two documents holding 'old', and the journal's folder. */
  async function workspace() {
    const root = await harness.tempDir();
    const dataDir = join(root, 'data');
    const notebook = newId();
    await mkdir(join(dataDir, notebook), { recursive: true });
    const docs = [`${notebook}/${newId()}.json`, `${notebook}/${newId()}.json`];
    for (const doc of docs) await writeFile(join(dataDir, doc), 'old');
    const read = (doc: string) => readFile(join(dataDir, doc), 'utf8');
    return { dir: join(root, 'journal'), dataDir, docs, read };
  }

  const segments = async (dir: string) => (await readdir(dir).catch(() => [] as string[])).filter((name) => name.endsWith('.log'));

  it('writes back, at the next start, what was acknowledged but whose file the machine never got', async () => {
    const { dir, dataDir, docs, read } = await workspace();
    const { journal } = await WriteJournal.open(dir, dataDir, silentLogger);
    // The record is durable; the file write is lost (the machine stopped before the page cache reached the disk).
    await journal.record(docs[0]!, Buffer.from('first'), () => undefined);
    await journal.record(docs[0]!, Buffer.from('newest'), () => undefined);
    await journal.record(docs[1]!, Buffer.from('other'), () => undefined);
    expect(await read(docs[0]!)).toBe('old');
    const again = await WriteJournal.open(dir, dataDir, silentLogger);
    expect(again.replayed.sort()).toEqual([...docs].sort());
    expect([await read(docs[0]!), await read(docs[1]!)]).toEqual(['newest', 'other']);
    expect(await segments(dir)).toEqual([]);
  });

  it('keeps a document changed after its last record (by hand while the kernel was down), and writes back the others', async () => {
    const { dir, dataDir, docs, read } = await workspace();
    const { journal } = await WriteJournal.open(dir, dataDir, silentLogger);
    const version = (id: string, text: string) => Buffer.from(JSON.stringify({ id, text }));
    // The kernel wrote both files, then was killed before its checkpoint: the records stay.
    await journal.record(docs[0]!, version('a', 'kernel'), () => writeFile(join(dataDir, docs[0]!), version('a', 'kernel')));
    await journal.record(docs[1]!, version('b', 'kernel'), () => undefined);
    await new Promise((resolve) => setTimeout(resolve, 30));
    // While it is down, an editor or a sync tool changes the first document.
    await writeFile(join(dataDir, docs[0]!), version('a', 'by hand'));
    const warnings: string[] = [];
    const log: Logger = { ...silentLogger, warn: (message: string) => { warnings.push(message); } };
    const again = await WriteJournal.open(dir, dataDir, log);
    expect(again.replayed).toEqual([docs[1]]);
    expect(JSON.parse(await read(docs[0]!))).toEqual({ id: 'a', text: 'by hand' });
    expect(JSON.parse(await read(docs[1]!))).toEqual({ id: 'b', text: 'kernel' });
    expect(warnings.some((message) => message.includes('after the kernel last wrote it'))).toBe(true);
    // The journal's text is kept aside, not lost.
    expect((await readdir(join(dir, 'kept'))).length).toBe(1);
  });

  it('writes back a file a crash left as it was before a record, and does not bring back one moved away while down', async () => {
    const { dir, dataDir, docs, read } = await workspace();
    const { journal } = await WriteJournal.open(dir, dataDir, silentLogger);
    const version = (id: string, text: string) => Buffer.from(JSON.stringify({ id, text }));
    // A whole, older document the crash left in place (its rename never reached the disk): written back,
    // whatever the clock says of its time.
    await writeFile(join(dataDir, docs[0]!), version('a', 'older'));
    await journal.record(docs[0]!, version('a', 'acknowledged'), () => undefined);
    // A document the person moved away while the kernel was down: not made again where it was.
    await journal.record(docs[1]!, version('b', 'kernel'), () => writeFile(join(dataDir, docs[1]!), version('b', 'kernel')));
    await rename(join(dataDir, docs[1]!), join(dataDir, `${docs[1]!}.moved`));
    const again = await WriteJournal.open(dir, dataDir, silentLogger);
    expect(again.replayed).toEqual([docs[0]]);
    expect(JSON.parse(await read(docs[0]!))).toEqual({ id: 'a', text: 'acknowledged' });
    expect(existsSync(join(dataDir, docs[1]!))).toBe(false);
  });

  it("keeps a person's restore made while down that kept the old size and time (its change time tells it apart)", async () => {
    const { dir, dataDir, docs, read } = await workspace();
    const file = join(dataDir, docs[0]!);
    await writeFile(file, JSON.stringify({ id: 'a', text: 'as before' }));
    // Whole seconds, so that the restore below can set exactly the same time again.
    await utimes(file, 1_700_000_000, 1_700_000_000);
    const { journal } = await WriteJournal.open(dir, dataDir, silentLogger);
    // Killed after the record, before the file was replaced.
    await journal.record(docs[0]!, Buffer.from(JSON.stringify({ id: 'a', text: 'kernel' })), () => undefined);
    // A tool restores another version of the same length into the same file, and its old time.
    await new Promise((resolve) => setTimeout(resolve, 20));
    await writeFile(file, JSON.stringify({ id: 'a', text: 'restored!' }));
    await utimes(file, 1_700_000_000, 1_700_000_000);
    const again = await WriteJournal.open(dir, dataDir, silentLogger);
    expect(again.replayed).toEqual([]);
    expect(JSON.parse(await read(docs[0]!))).toEqual({ id: 'a', text: 'restored!' });
  });

  it('ignores a record cut short (never acknowledged) at the end, and replays the whole ones before it', async () => {
    const { dir, dataDir, docs, read } = await workspace();
    const { journal } = await WriteJournal.open(dir, dataDir, silentLogger);
    await journal.record(docs[0]!, Buffer.from('whole'), () => undefined);
    await journal.record(docs[1]!, Buffer.from('cut short'), () => undefined);
    const [segment] = await segments(dir);
    const size = (await readFile(join(dir, segment!))).length;
    await truncate(join(dir, segment!), size - 4);
    const warnings: string[] = [];
    const log: Logger = { ...silentLogger, warn: (message: string) => { warnings.push(message); } };
    const again = await WriteJournal.open(dir, dataDir, log);
    expect(again.replayed).toEqual([docs[0]]);
    expect([await read(docs[0]!), await read(docs[1]!)]).toEqual(['whole', 'old']);
    expect(warnings.some((message) => message.includes('not whole'))).toBe(true);
  });

  it('is empty after a checkpoint, the files written then durable on their own', async () => {
    const { dir, dataDir, docs, read } = await workspace();
    const { journal } = await WriteJournal.open(dir, dataDir, silentLogger);
    await journal.record(docs[0]!, Buffer.from('new'), () => replaceFile(join(dataDir, docs[0]!), 'new'));
    expect(await segments(dir)).toHaveLength(1);
    await journal.checkpoint();
    expect(await segments(dir)).toEqual([]);
    expect((await WriteJournal.open(dir, dataDir, silentLogger)).replayed).toEqual([]);
    expect(await read(docs[0]!)).toBe('new');
  });

  it('keeps no record of a write whose file could not be written, so no replay applies it', async () => {
    const { dir, dataDir, docs, read } = await workspace();
    const { journal } = await WriteJournal.open(dir, dataDir, silentLogger);
    await expect(journal.record(docs[0]!, Buffer.from('refused'), () => { throw new Error('no room for the file'); })).rejects.toThrow('no room for the file');
    expect(await segments(dir)).toEqual([]);
    expect((await WriteJournal.open(dir, dataDir, silentLogger)).replayed).toEqual([]);
    expect(await read(docs[0]!)).toBe('old');
  });

  it('is checkpointed before every structural write, and empty once the kernel is closed', async () => {
    const { kernel, act } = await harness.boot();
    const journalDir = join(kernel.workspace.privateDir, 'journal', 'writes');
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    const doc = await act<Created>('document_create', { notebook: notebook.id, title: 'D', markdown: 'start' });
    await Promise.all(Array.from({ length: 10 }, (_, i) => act('block_append', { parentId: doc.id, markdown: `line ${i}` })));
    expect(await segments(journalDir)).toHaveLength(1);
    // A structural write (here a second document) checkpoints first.
    await act<Created>('document_create', { notebook: notebook.id, title: 'E', markdown: 'x' });
    expect(await segments(journalDir)).toEqual([]);
    await act('block_append', { parentId: doc.id, markdown: 'last' });
    await kernel.close();
    expect(await segments(journalDir)).toEqual([]);
    const file = JSON.parse(await readFile(join(kernel.workspace.dataDir, notebook.id, `${doc.id}.json`), 'utf8')) as { children: { content: string }[] };
    expect(file.children.map((child) => child.content)).toEqual(['start', ...Array.from({ length: 10 }, (_, i) => `line ${i}`), 'last']);
  });
});
