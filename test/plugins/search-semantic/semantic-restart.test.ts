import { cp, readdir, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import workerThreads, { type Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import type { Act } from '../blocks/blocks-harness.js';
import { embedded, semantic, until, useSemantic, type Created, type Status } from './semantic-harness.js';

/**
 * Copies a workspace a kernel is writing to (as a crash would find it). A file may be renamed or removed
 * between the listing and its copy (the audit head's temporary file, a journal segment): the copy is
 * then made again. Temporary files are left out, as the next start sweeps them.
 */
async function copyLive(from: string, to: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await cp(from, to, { recursive: true, filter: (source) => !source.endsWith('kernel.lock') && !source.endsWith('.tmp') });
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || attempt === 5) throw error;
      await rm(to, { recursive: true, force: true });
    }
  }
}

const { boot, fakeServer, tempDir } = useSemantic();

/** exactBelow 0: every query goes through the HNSW index (none is answered exactly). */
const ANN_ONLY = { exactBelow: 0 };

async function annReady(act: Act): Promise<Status> {
  return embedded(act, (status) => status.vectorIndex.state === 'ready' && status.vectorIndex.size === status.indexed);
}

async function annFiles(root: string): Promise<string[]> {
  return (await readdir(join(root, 'index'))).filter((name) => name.startsWith('embeddings-')).sort();
}

async function firstRun() {
  const fake = await fakeServer();
  const { act, kernel } = await boot(fake, { semantic: ANN_ONLY });
  const notebook = await act<Created>('notebook_create', { name: 'N' });
  await act('document_create', { notebook: notebook.id, title: 'Fruit', markdown: 'figs ripen late in summer\n\nplums are purple and sweet' });
  const status = await annReady(act);
  const root = kernel.workspace.root;
  await kernel.close();
  return { fake, root, notebook: notebook.id, indexed: status.indexed };
}

describe('semantic search across restarts', () => {
  it('keeps the vectors and the saved HNSW index: nothing is embedded again', async () => {
    const { fake, root, indexed } = await firstRun();
    expect(await annFiles(root)).toHaveLength(2);
    fake.texts.length = 0;
    const { act } = await boot(fake, { workspace: root, semantic: ANN_ONLY });
    const status = await annReady(act);
    expect(status.indexed).toBe(indexed);
    expect(status.vectorIndex.problem).toBeUndefined();
    expect(fake.texts).toEqual([]);
    expect((await semantic(act, 'purple plums')).results[0]!.snippet).toBe('plums are purple and sweet');
  });

  it('answers a search made right after a start from the saved HNSW index, once it is open, not with none while it opens', async () => {
    const { fake, root } = await firstRun();
    const { act } = await boot(fake, { workspace: root, semantic: ANN_ONLY });
    // Asked at once, as a one-shot `quire search` does: the saved graph is still being opened.
    const answer = await semantic(act, 'purple plums');
    expect(answer.note ?? '').not.toMatch(/vector index/);
    expect(answer.results[0]?.snippet).toBe('plums are purple and sweet');
  });

  it('keeps the vectors of a server answering under another model name than configured (a deployment, an alias): nothing is embedded again', async () => {
    const fake = await fakeServer();
    fake.servedModel = 'text-embedding-served-2024';
    const first = await boot(fake, { semantic: ANN_ONLY });
    const notebook = await first.act<Created>('notebook_create', { name: 'N' });
    await first.act('document_create', { notebook: notebook.id, title: 'Fruit', markdown: 'figs ripen late in summer\n\nplums are purple and sweet' });
    const before = await annReady(first.act);
    const root = first.kernel.workspace.root;
    await first.kernel.close();
    fake.texts.length = 0;
    const { act } = await boot(fake, { workspace: root, semantic: ANN_ONLY });
    const status = await annReady(act);
    expect(status.indexed).toBe(before.indexed);
    // Marked again at every start before, and a billed batch sent to learn the name once more.
    expect(fake.texts).toEqual([]);
    expect((await semantic(act, 'purple plums')).results[0]!.snippet).toBe('plums are purple and sweet');
    expect(fake.texts).toEqual(['purple plums']);
  });

  it('follows a server that goes back to answering under the configured name while running, and keeps it across a restart', async () => {
    const fake = await fakeServer();
    fake.servedModel = 'text-embedding-served-2024';
    const first = await boot(fake, { semantic: ANN_ONLY });
    const notebook = await first.act<Created>('notebook_create', { name: 'N' });
    await first.act('document_create', { notebook: notebook.id, title: 'Fruit', markdown: 'figs ripen late in summer' });
    await annReady(first.act);
    // The deployment is renamed back: answers now name the configured model; every block follows it.
    fake.servedModel = undefined;
    await first.act('document_create', { notebook: notebook.id, title: 'More', markdown: 'plums are purple and sweet' });
    const before = await embedded(first.act, (status) => !status.model.includes('served') && status.stale === 0 && status.indexed === status.total);
    const root = first.kernel.workspace.root;
    await first.kernel.close();
    fake.texts.length = 0;
    const { act } = await boot(fake, { workspace: root, semantic: ANN_ONLY });
    const status = await annReady(act);
    expect(status.indexed).toBe(before.indexed);
    expect(fake.texts).toEqual([]);
  });

  for (const damage of ['deleted', 'truncated'] as const) {
    it(`rebuilds an HNSW index file that was ${damage} from the stored vectors, without embedding again`, async () => {
      const { fake, root, indexed } = await firstRun();
      const files = await annFiles(root);
      const sidecar = JSON.parse(await readFile(join(root, 'index', files.find((name) => name.endsWith('.json'))!), 'utf8')) as { file: string };
      if (damage === 'deleted') for (const name of files) await rm(join(root, 'index', name));
      else await truncate(join(root, 'index', sidecar.file), 100);
      fake.texts.length = 0;
      const { act } = await boot(fake, { workspace: root, semantic: ANN_ONLY });
      const status = await annReady(act);
      expect(status.vectorIndex.problem).toBeDefined();
      expect(status.indexed).toBe(indexed);
      expect(fake.texts).toEqual([]);
      expect((await semantic(act, 'figs in summer')).results[0]!.snippet).toBe('figs ripen late in summer');
    });
  }

  it('rebuilds a saved HNSW index that is ahead of the store (embeddings.db removed), instead of trusting keys given out again', async () => {
    const fake = await fakeServer();
    const first = await boot(fake, { semantic: ANN_ONLY });
    const notebook = await first.act<Created>('notebook_create', { name: 'N' });
    await first.act('document_create', { notebook: notebook.id, title: 'Fruit', markdown: 'figs ripen late in summer\n\nplums are purple and sweet' });
    const temporary = await first.act<Created>('document_create', { notebook: notebook.id, title: 'Temporary', markdown: 'cherries for a week\n\napricots for another' });
    await annReady(first.act);
    await first.act('document_remove', { id: temporary.id });
    await first.act('document_create', { notebook: notebook.id, title: 'Later', markdown: 'quinces arrived after the others' });
    await annReady(first.act);
    const root = first.kernel.workspace.root;
    await first.kernel.close();
    for (const name of await readdir(join(root, 'index'))) if (name.startsWith('embeddings.db')) await rm(join(root, 'index', name));
    const { act } = await boot(fake, { workspace: root, semantic: ANN_ONLY });
    const status = await annReady(act);
    expect(status.vectorIndex.problem).toMatch(/past the stored vectors/);
    expect((await semantic(act, 'quinces arrived after the others')).results[0]!.snippet).toBe('quinces arrived after the others');
    expect((await semantic(act, 'figs in summer')).results[0]!.snippet).toBe('figs ripen late in summer');
  });

  it('opens the HNSW index again when its worker thread stops, instead of failing every search until a restart', async () => {
    // The ANN worker, caught as it starts (the kernel's egress guard replaced Worker already: wrapped again).
    const started: Worker[] = [];
    const Guarded = workerThreads.Worker;
    class Caught extends Guarded {
      constructor(...args: ConstructorParameters<typeof Guarded>) {
        super(...args);
        if (String(args[0]).includes('ann-worker')) started.push(this);
      }
    }
    const fake = await fakeServer();
    const { act } = await boot(fake, { semantic: ANN_ONLY });
    Object.defineProperty(workerThreads, 'Worker', { value: Caught, writable: true, configurable: true });
    syncBuiltinESMExports();
    try {
      const notebook = await act<Created>('notebook_create', { name: 'N' });
      await act('document_create', { notebook: notebook.id, title: 'Fruit', markdown: 'figs ripen late in summer\n\nplums are purple and sweet' });
      await annReady(act);
      expect(started).toHaveLength(1);
      await started[0]!.terminate();
      await until('the index opened again', async () => {
        const found = await semantic(act, 'purple plums').catch(() => undefined);
        return found?.results[0]?.snippet === 'plums are purple and sweet' ? found : undefined;
      });
      expect(started).toHaveLength(2);
    } finally {
      Object.defineProperty(workerThreads, 'Worker', { value: Guarded, writable: true, configurable: true });
      syncBuiltinESMExports();
    }
  });

  it('embeds every block again when the embedder\'s vectors change size under the same model id', async () => {
    const { fake, root } = await firstRun();
    fake.texts.length = 0;
    const { act } = await boot(fake, { workspace: root, semantic: ANN_ONLY, embedDimensions: 32 });
    const status = await until('every block embedded at the new size', async () => {
      const current = await act<Status>('embeddings_status', {});
      return current.pending === 0 && current.queued === 0 && !current.comparing && current.vectorIndex.state === 'ready' && fake.texts.includes('figs ripen late in summer') ? current : undefined;
    });
    expect(status.failed).toBe(0);
    const found = await semantic(act, 'figs in summer');
    expect(found.complete).toBe(true);
    expect(found.results[0]!.snippet).toBe('figs ripen late in summer');
  });

  it('takes on a size the embedder first answers at a query after a restart (no size configured): incomplete, said, and every block embedded again', async () => {
    const { fake, root } = await firstRun();
    fake.servedDimensions = 32;
    fake.texts.length = 0;
    const { act } = await boot(fake, { workspace: root, semantic: ANN_ONLY });
    // Nothing was due at the start: the first answer of the new size is the query's.
    const first = await semantic(act, 'figs in summer');
    expect(first.complete).toBe(false);
    expect(first.note).toContain('32 dimensions');
    await until('every block embedded at the new size', async () => {
      const current = await act<Status>('embeddings_status', {});
      return current.pending === 0 && current.queued === 0 && !current.comparing && current.vectorIndex.state === 'ready' && fake.received('figs ripen late in summer') ? current : undefined;
    });
    const found = await semantic(act, 'figs in summer');
    expect(found.complete).toBe(true);
    expect(found.results[0]!.snippet).toBe('figs ripen late in summer');
  });

  it('takes on a size the embedder changes to while the kernel runs (no size configured): every block embedded again, no restart needed', async () => {
    const fake = await fakeServer();
    const { act } = await boot(fake, { semantic: ANN_ONLY });
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    await act('document_create', { notebook: notebook.id, title: 'Fruit', markdown: 'figs ripen late in summer\n\nplums are purple and sweet' });
    await annReady(act);
    // The model behind the name is swapped: every answer is 32 numbers now. Each batch failed "expected 64" until a restart.
    fake.servedDimensions = 32;
    fake.texts.length = 0;
    await act('document_create', { notebook: notebook.id, title: 'More', markdown: 'pears are green and grainy' });
    const status = await until('every block embedded at the new size', async () => {
      const current = await act<Status>('embeddings_status', {});
      return current.pending === 0 && current.queued === 0 && !current.comparing && current.vectorIndex.state === 'ready' && fake.received('figs ripen late in summer') ? current : undefined;
    });
    expect(status.failed).toBe(0);
    for (const [query, snippet] of [['green pears', 'pears are green and grainy'], ['figs in summer', 'figs ripen late in summer']]) {
      const found = await semantic(act, query!);
      expect(found.complete).toBe(true);
      expect(found.results[0]!.snippet).toBe(snippet);
    }
  });

  it('trusts a saved HNSW index whose last change was a removal the store has since forgotten', async () => {
    const { fake, root, notebook } = await firstRun();
    const second = await boot(fake, { workspace: root, semantic: ANN_ONLY });
    const later = await second.act<Created>('document_create', { notebook, title: 'Later', markdown: 'quinces for a while' });
    await annReady(second.act);
    await second.act('document_remove', { id: later.id });
    await annReady(second.act);
    await second.kernel.close();
    const { act } = await boot(fake, { workspace: root, semantic: ANN_ONLY });
    const status = await annReady(act);
    expect(status.vectorIndex.problem).toBeUndefined();
    expect((await semantic(act, 'figs in summer')).results[0]!.snippet).toBe('figs ripen late in summer');
  });

  it('catches an HNSW index saved before the last changes up from the store (as after a crash)', async () => {
    const { fake, root, notebook } = await firstRun();
    const { act, kernel } = await boot(fake, { workspace: root, semantic: { ...ANN_ONLY, saveEveryMs: 86_400_000 } });
    await act('document_create', { notebook, title: 'Later', markdown: 'quinces arrived after the save' });
    await annReady(act);
    // The workspace as a crash would leave it now: the store has the new vectors, the saved index does not.
    const copy = join(await tempDir(), 'workspace');
    await copyLive(kernel.workspace.root, copy);
    fake.texts.length = 0;
    const { act: again } = await boot(fake, { workspace: copy, semantic: ANN_ONLY });
    const status = await annReady(again);
    expect(status.vectorIndex.problem).toBeUndefined();
    expect(fake.texts).toEqual([]);
    expect((await semantic(again, 'quinces arrived')).results[0]!.snippet).toBe('quinces arrived after the save');
  });

  it('re-embeds only the blocks whose text changed while the kernel was down, and nothing after an index rebuild', async () => {
    const { fake, root } = await firstRun();
    // A document file edited by hand while no kernel runs.
    const files = (await readdir(join(root, 'data'), { recursive: true })).filter((name) => name.endsWith('.json') && !name.endsWith('.notebook.json'));
    expect(files).toHaveLength(1);
    const file = join(root, 'data', files[0]!);
    const text = await readFile(file, 'utf8');
    await writeFile(file, text.replace('plums are purple and sweet', 'plums are purple, sweet and edited offline'));
    fake.texts.length = 0;
    const { act } = await boot(fake, { workspace: root, semantic: ANN_ONLY });
    await until('the edited block embedded', () => fake.received('edited offline'));
    await annReady(act);
    expect(fake.texts).toEqual(['plums are purple, sweet and edited offline']);
    expect((await semantic(act, 'edited offline')).results[0]!.snippet).toBe('plums are purple, sweet and edited offline');
    // The blocks index rebuilt from the files: the vectors (in their own database) stay.
    fake.texts.length = 0;
    await act('index_rebuild', {});
    await annReady(act);
    expect(fake.texts).toEqual([]);
    expect((await semantic(act, 'figs in summer')).results[0]!.snippet).toBe('figs ripen late in summer');
  });

  it('marks the vectors of another model stale, never compares them, and embeds everything again in the background', async () => {
    const { fake, root, indexed } = await firstRun();
    // The new model's indexer calls fail: the old vectors stay, stale.
    fake.failIf = (input) => !input.includes('purple plums');
    const { act } = await boot(fake, { workspace: root, semantic: ANN_ONLY, embedModel: 'fake-embed-2' });
    const stale = await until('the first batch of the new model failed', async () => {
      const status = await act<Status>('embeddings_status', {});
      // Nothing queued either: a search while blocks are being taken in says that first.
      return status.failed > 0 && !status.comparing && status.queued === 0 ? status : undefined;
    });
    expect(stale.model).toBe('providers/openai:fake-embed-2');
    expect(stale.stale).toBe(indexed);
    expect(stale.indexed).toBe(0);
    // Asked once: the start's sync reports every notebook read again, some 20 ms after it, and that was
    // counted as blocks being taken in (seen once in six fresh-clone runs); it is not, its flags unchanged.
    const meanwhile = await semantic(act, 'purple plums');
    expect(meanwhile.results).toEqual([]);
    expect(meanwhile.complete).toBe(false);
    expect(meanwhile.note).toContain('have vectors of another model');
    fake.failIf = undefined;
    await act('embeddings_retry_failed', {});
    const done = await annReady(act);
    expect([done.indexed, done.stale]).toEqual([indexed, 0]);
    const after = await semantic(act, 'purple plums');
    expect([after.complete, after.results[0]!.snippet, after.model]).toEqual([true, 'plums are purple and sweet', 'providers/openai:fake-embed-2']);
    // One HNSW index (graph and sidecar), the new model's.
    expect(await annFiles(root)).toHaveLength(2);
  });
});
