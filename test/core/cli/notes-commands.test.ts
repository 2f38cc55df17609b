import { spawnSync } from 'node:child_process';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../../core/cli/run-cli.js';
import { bufferIO } from '../../helpers/buffer-io.js';
import { CLI, CliProcess, startServe } from '../../helpers/cli-process.js';
import { useHarness, writeUserPlugin } from '../../helpers/harness.js';
import type { KernelConfigFile } from '../../../core/config/kernel-config.js';
import { FAKE_SEMANTIC } from '../../plugins/search-fulltext/hybrid-harness.js';
import { actor } from '../../plugins/blocks/blocks-harness.js';

/** Issue 18, point 10: reading the notes from the terminal, with the workspace opened or served. */
interface Created { id: string }

async function run(args: string[]) {
  const io = bufferIO();
  const code = await runCli(args, io);
  return { code, out: io.outText(), err: io.errText() };
}

describe('quire notebooks, docs, show, search, export by path', () => {
  const harness = useHarness();
  const processes: CliProcess[] = [];
  // Before the harness removes the folders (after-hooks run last registered first): the processes are gone.
  afterEach(async () => { await Promise.all(processes.splice(0).map((child) => { child.kill(); return child.exited; })); });

  async function workspace() {
    const root = join(await harness.tempDir('quire-notes-cli-'), 'workspace');
    const kernel = await harness.boot({ realManifests: true, workspace: root, config: { plugins: { blocks: { config: { watch: false, welcome: false } } } } });
    const act = actor(kernel);
    const notebook = await act<Created>('notebook_create', { name: 'Garden' });
    const beds = await act<Created>('document_create', { notebook: notebook.id, title: 'Beds', markdown: 'tomatoes and basil' });
    await act<Created>('document_create', { notebook: notebook.id, parentId: beds.id, title: 'North bed', markdown: 'cold frame here' });
    await kernel.close();
    return { root, notebook, beds };
  }

  it('answer from a workspace they open themselves, in text and with --json', async () => {
    const { root, notebook, beds } = await workspace();
    const notebooks = await run(['notebooks', '--workspace', root]);
    expect(notebooks).toMatchObject({ code: 0, out: `${notebook.id}  Garden  (private, 1 documents)` });
    expect(JSON.parse((await run(['notebooks', '--json', '--workspace', root])).out)).toMatchObject({ notebooks: [{ id: notebook.id, name: 'Garden' }] });
    expect((await run(['docs', 'garden', '--workspace', root])).out).toBe(`${beds.id}  Beds  (1 below)`);
    expect(await run(['notebooks', 'Garden', '--workspace', root])).toMatchObject({ code: 2, err: expect.stringContaining("quire notebooks: unexpected argument 'Garden': it takes no arguments besides options") });
    expect((await run(['docs', 'Garden', '--parent', 'Garden/Beds', '--workspace', root])).out).toMatch(/ {2}North bed$/);
    expect((await run(['show', 'Garden/Beds/North bed', '--workspace', root])).out).toBe('# North bed\n\ncold frame here');
    expect((await run(['show', beds.id, '--workspace', root])).out).toBe('# Beds\n\ntomatoes and basil');
    expect(await run(['search', 'tomatoes', '--page', '0', '--workspace', root])).toMatchObject({ code: 2, err: "quire search: --page must be a positive whole number, not '0'" });
    expect(await run(['search', 'tomatoes', '--page', '99999', '--workspace', root])).toMatchObject({ code: 2, err: 'quire search: --page must be at most 10000 (a search answers that many pages at most), not 99999' });
    expect(await run(['docs', 'Gardn', '--workspace', root])).toMatchObject({ code: 1, err: "quire docs: no notebook 'Gardn' (there are 'Garden')" });
    const found = await run(['search', 'tomatoes', '--workspace', root]);
    expect(found.out).toContain('/Beds');
    expect(found.out).toContain('*tomatoes*');
    // Nothing to show or search: the usage, before the workspace is opened (here, one that is not there).
    for (const verb of ['show', 'search', 'docs']) {
      const nowhere = join(root, '..', 'nowhere');
      expect(await run([verb, '--workspace', nowhere])).toMatchObject({ code: 2, err: expect.stringContaining(`quire ${verb}: Usage: quire ${verb} <`) });
    }
    // A folder of other files (a mistyped path to one's notes) is not made a workspace: it got a Welcome notebook, exit 0.
    const notesFolder = join(root, '..', 'my notes');
    await mkdir(notesFolder);
    await writeFile(join(notesFolder, 'Compost.md'), '# Compost\n');
    expect(await run(['notebooks', '--workspace', notesFolder])).toMatchObject({ code: 1, err: expect.stringContaining('is a folder of other files, not a Quire workspace') });
    expect(await readdir(notesFolder)).toEqual(['Compost.md']);
    // A folder holding only what a system leaves everywhere (Finder's .DS_Store) is an empty one to begin in.
    const fresh = join(root, '..', 'fresh');
    await mkdir(fresh);
    await writeFile(join(fresh, '.DS_Store'), '');
    expect((await run(['notebooks', '--workspace', fresh])).code).toBe(0);
    const missing = await run(['show', 'Garden/Nowhere', '--workspace', root]);
    expect(missing).toMatchObject({ code: 1, err: "quire show: NOT_FOUND: no document at 'Garden/Nowhere'" });
    const folder = join(root, '..', 'out');
    expect((await run(['export', 'Garden/Beds', folder, '--workspace', root])).code).toBe(0);
    expect(await readdir(folder)).toEqual(expect.arrayContaining(['Beds.md']));
    // Again into the same folder: refused naming the flag that replaces (it said `pass overwrite: true`).
    const again = await run(['export', 'Garden/Beds', folder, '--workspace', root]);
    expect(again).toMatchObject({ code: 1, err: `quire export: ${join(folder, 'Beds.md')} already exists; give --overwrite to replace it (nothing was written)` });
    expect((await run(['export', 'Garden/Beds', folder, '--overwrite', '--workspace', root])).code).toBe(0);
  }, 60_000);

  it('end quietly, their kernel closed, when what reads their output has gone (quire search | head)', async () => {
    const { root } = await workspace();
    // `true` reads nothing and is gone before the command prints: each write meets a closed pipe (EPIPE).
    for (const args of [['search', 'tomatoes'], ['show', 'Garden/Beds'], ['notebooks']]) {
      const piped = spawnSync('bash', ['-c', `set -o pipefail; "${process.execPath}" "${CLI}" ${args.map((arg) => `'${arg}'`).join(' ')} --workspace '${root}' | true`], { encoding: 'utf8' });
      expect([args[0], piped.status, piped.stderr]).toEqual([args[0], 0, '']);
    }
    // The workspace's lock was let go: the next command opens it.
    expect(await run(['notebooks', '--workspace', root])).toMatchObject({ code: 0 });
    // Progress goes to standard error: gone too, the import crashed part way and the next start undid it.
    const notes = join(root, '..', 'to-import');
    await mkdir(notes, { recursive: true });
    for (let i = 0; i < 80; i++) await writeFile(join(notes, `note ${i}.md`), `note ${i}\n`);
    const imported = spawnSync('bash', ['-c', `set -o pipefail; "${process.execPath}" "${CLI}" import '${notes}' --notebook Garden --workspace '${root}' 2>&1 | true`], { encoding: 'utf8' });
    expect([imported.status, imported.stderr]).toEqual([0, '']);
    expect((await run(['docs', 'Garden', '--workspace', root])).out.split('\n').filter((line) => / {2}note \d+$/.test(line))).toHaveLength(80);
  }, 60_000);

  it('ask the kernel that serves the workspace when there is one', async () => {
    const { root, notebook } = await workspace();
    const serve = await startServe(root);
    processes.push(serve.process);
    const notebooks = await run(['notebooks', '--workspace', root]);
    expect(notebooks).toMatchObject({ code: 0, out: `${notebook.id}  Garden  (private, 1 documents)` });
    expect((await run(['show', 'Garden/Beds', '--workspace', root])).out).toBe('# Beds\n\ntomatoes and basil');
    // QUIRE_TOKEN comes first; a stale one is named as the token used (the refusal named none).
    process.env.QUIRE_TOKEN = 'stale-token-of-another-workspace';
    try {
      expect(await run(['notebooks', '--workspace', root])).toMatchObject({ code: 1, err: expect.stringContaining('(the token used: QUIRE_TOKEN, which comes before .quire/admin.token)') });
    } finally {
      delete process.env.QUIRE_TOKEN;
    }
  }, 60_000);
  it('page through one hybrid ranking: every page of a search has results until they end, none twice', async () => {
    const root = join(await harness.tempDir('quire-notes-cli-'), 'workspace');
    // Semantic search by a stand-in with fixed topic vectors, so that the search is hybrid (fused).
    const config: KernelConfigFile = { plugins: { blocks: { config: { watch: false, welcome: false } }, 'fake-semantic': { trusted: true, config: {} }, 'search-semantic': { enabled: false } } };
    await mkdir(root, { recursive: true });
    await writeFile(join(root, 'quire.json'), JSON.stringify(config));
    await writeUserPlugin(root, 'fake-semantic', FAKE_SEMANTIC);
    const kernel = await harness.boot({ realManifests: true, workspace: root, config });
    const act = actor(kernel);
    const notebook = await act<Created>('notebook_create', { name: 'Many' });
    // 150 blocks the word finds: eight pages of 20, past the 50 a hybrid search fuses by default.
    const paragraphs = Array.from({ length: 150 }, (_, i) => `tomato ${'filler '.repeat(i % 37)}${['soup', 'basil soil', 'dog', 'bake cook', 'sun garden grow'][i % 5]} number ${i}`);
    await act('document_create', { notebook: notebook.id, title: 'Many', markdown: paragraphs.join('\n\n') });
    await kernel.close();
    const seen = new Map<string, number>();
    for (let page = 1; page <= 8; page++) {
      const answer = await run(['search', 'tomato', '--page', String(page), '--workspace', root]);
      const ids = [...answer.out.matchAll(/^(\S+) {2}\/Many/gm)].map((match) => match[1]!);
      expect([page, answer.code, ids.length]).toEqual([page, 0, page === 8 ? 10 : 20]);
      for (const id of ids) {
        expect(seen.get(id), `block ${id} on page ${page} was on page ${seen.get(id)}`).toBeUndefined();
        seen.set(id, page);
      }
    }
    expect(seen.size).toBe(150);
    expect((await run(['search', 'tomato', '--page', '9', '--workspace', root])).out).toContain('no results');
  }, 60_000);
});
