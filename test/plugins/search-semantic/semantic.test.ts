import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { caught } from '../../helpers/harness.js';
import { embedded, semantic, until, useSemantic, type Created, type Status } from './semantic-harness.js';
import { toolSpecs } from '../../../core/turn/turn-loop.js';

const { boot, fakeServer } = useSemantic();

/** MODEL_UNAVAILABLE as raised by the plugin reaches the caller as it is (503 over HTTP). */
const unavailable = (error: { code?: string; details?: Record<string, unknown> }) => error.code === 'MODEL_UNAVAILABLE' && error.details?.raised === undefined;

const GARDEN = 'Tomatoes need warm soil and full sun.\n\nBasil grows well beside tomatoes.\n\nThe quick brown fox jumps over the lazy dog.';

describe('semantic search: indexing after writes', () => {
  it('embeds new blocks, re-embeds only a changed one, forgets removed ones, and finds the nearest', async () => {
    const fake = await fakeServer();
    const { act } = await boot(fake);
    const notebook = await act<Created>('notebook_create', { name: 'Garden' });
    const doc = await act<Created>('document_create', { notebook: notebook.id, title: 'Plants', markdown: GARDEN });
    const status = await embedded(act);
    expect([status.total, status.indexed]).toEqual([4, 4]);
    expect(fake.texts.sort()).toEqual(['Basil grows well beside tomatoes.', 'Plants', 'The quick brown fox jumps over the lazy dog.', 'Tomatoes need warm soil and full sun.']);
    const found = await semantic(act, 'quick brown fox');
    expect(found.results[0]!.snippet).toBe('The quick brown fox jumps over the lazy dog.');
    expect(found.results[0]!.arms.semantic).toEqual({ rank: 1, score: found.results[0]!.score });
    expect(found.results.map((hit) => hit.rank)).toEqual([1, 2, 3, 4]);
    expect(found.complete).toBe(true);
    expect(found.model).toBe('providers/openai:fake-embed');

    const fox = found.results[0]!.id;
    fake.texts.length = 0;
    await act('block_update', { id: fox, markdown: 'A slow grey wolf sleeps under the old oak tree.' });
    await until('the changed block embedded', () => fake.received('grey wolf'));
    await embedded(act);
    // Only the changed block (and the query) went out again.
    expect(fake.texts.filter((text) => text !== 'quick brown fox')).toEqual(['A slow grey wolf sleeps under the old oak tree.']);
    expect((await semantic(act, 'grey wolf under an oak')).results[0]!.id).toBe(fox);

    await act('document_remove', { id: doc.id });
    await until('rows of the removed document gone', async () => (await act<Status>('embeddings_status', {})).total === 0);
    expect((await semantic(act, 'grey wolf')).results).toEqual([]);
  });

  it('pages the hits and keeps ranks across pages', async () => {
    const fake = await fakeServer();
    const { act } = await boot(fake);
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    await act('document_create', { notebook: notebook.id, title: 'Many', markdown: Array.from({ length: 9 }, (_, i) => `${'apples '.repeat(i + 1)}and ${'pears '.repeat(9 - i)}`).join('\n\n') });
    await embedded(act);
    const all = await semantic(act, 'apples', { pageSize: 10 });
    const second = await semantic(act, 'apples', { pageSize: 3, page: 2 });
    expect(second.results.map((hit) => [hit.id, hit.rank])).toEqual(all.results.slice(3, 6).map((hit) => [hit.id, hit.rank]));
  });

  it('is present but answers a clear error when no embedder is configured, and is not offered to the agent', async () => {
    const { act, kernel } = await boot(undefined, { embedder: 'none' });
    const error = await caught(semantic(act, 'anything'));
    expect(unavailable(error)).toBe(true);
    expect(error.message).toContain('no embedder is configured: set plugins.search-semantic.config.embedder');
    expect(await act('embeddings_status', {})).toMatchObject({ enabled: false, embedder: null });
    // The agent is not offered what cannot work; hybrid (which falls back to full text) and the status stay.
    const offered = toolSpecs(kernel.registry, []).map((tool) => tool.name);
    expect(offered).toEqual(expect.arrayContaining(['search_hybrid', 'search_fulltext', 'embeddings_status']));
    expect(offered).not.toContain('search_semantic');
    expect(offered).not.toContain('embeddings_reindex');
    expect(kernel.registry.get('search_semantic')?.unavailable?.()).toBe('no embedder is selected');
  });

  it('names the missing embedder when the configured one is not offered', async () => {
    const { act, kernel } = await boot(undefined, { semantic: { embedder: 'providers' } });
    const error = await caught(semantic(act, 'anything'));
    expect(unavailable(error)).toBe(true);
    const why = "plugins.search-semantic.config.embedder names the embedder 'providers', which no active plugin offers";
    expect(error.message).toContain(why);
    // Said where configuration problems are (at start, /api/plugins), and by the action's listing: it said 'no embedder is selected'.
    expect(kernel.configProblems()).toContainEqual(expect.objectContaining({ code: 'CONFIG_BACKEND_MISSING', pointer: '/plugins/search-semantic/config/embedder', message: expect.stringContaining(why) }));
    expect(kernel.registry.get('search_semantic')?.unavailable?.()).toContain(why);
  });

  it('says why the configured embedder or reranker cannot be used: a key\'s variable unset, an address with a password', async () => {
    // It said "which no active plugin offers" (the providers plugin was active), and the reason was a log line.
    const unset = 'QUIRE_TEST_EMBED_KEY_NEVER_SET';
    const { act, kernel } = await boot(undefined, { config: { plugins: { providers: { config: { embedder: { provider: 'openai', model: 'm', baseURL: 'http://127.0.0.1:9/v1', apiKeyEnv: unset } } } } } });
    const error = await caught(semantic(act, 'anything'));
    expect(unavailable(error)).toBe(true);
    expect(error.message).toContain(`names the embedder 'providers', which cannot be used: the openai key is missing: set the environment variable ${unset}`);
    expect(kernel.configProblems()).toContainEqual(expect.objectContaining({ code: 'CONFIG_BACKEND_MISSING', pointer: '/plugins/providers/config/embedder/apiKeyEnv', message: expect.stringContaining(unset) }));
    expect(kernel.registry.get('search_semantic')?.unavailable?.()).toContain(unset);

    // A user and password in an address failed every request ("a URL that includes credentials"); said at start, never repeated.
    const withPassword = await boot(undefined, { config: { plugins: {
      providers: { config: { embedder: { provider: 'openai', model: 'm', baseURL: 'http://me:s3cret@127.0.0.1:9/v1', apiKeyEnv: false }, reranker: { shape: 'tei', baseURL: 'http://me:s3cret@127.0.0.1:9', apiKeyEnv: false } } },
      rerank: { config: { reranker: 'providers' } },
    } } });
    const problems = withPassword.kernel.configProblems();
    expect(problems.filter((found) => found.code === 'CONFIG_BACKEND_MISSING').map((found) => [found.pointer, found.message.includes('holds a user name or password')]).sort()).toEqual([
      ['/plugins/providers/config/embedder/baseURL', true],
      ['/plugins/providers/config/reranker/baseURL', true],
    ]);
    expect(JSON.stringify(problems)).not.toContain('s3cret');
    expect((await caught(semantic(withPassword.act, 'anything'))).message).toContain('holds a user name or password');
  });
});

describe('semantic search: backoff and the circuit breaker', () => {
  it('stops the pass at the first failed call, pauses, and embeds everything once retried', async () => {
    const fake = await fakeServer();
    // A long pause: nothing else can be sent until retry_failed ends it.
    const { act } = await boot(fake, { semantic: { retry: { baseMs: 60_000, maxMs: 600_000, maxFailures: 3, pauseMs: 60_000 } } });
    fake.failNext = 1;
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    await act('document_create', { notebook: notebook.id, title: 'Eight', markdown: Array.from({ length: 7 }, (_, i) => `paragraph number ${i} of eight`).join('\n\n') });
    const failed = await until('the first batch failed', async () => {
      const status = await act<Status & { pausedUntil: string | null }>('embeddings_status', {});
      return status.failed > 0 ? status : undefined;
    });
    // One call (a batch of 4) failed; the other 4 blocks were not tried in that pass.
    expect(fake.requests).toHaveLength(1);
    expect([failed.failed, failed.pending, failed.indexed]).toEqual([4, 4, 0]);
    expect(failed.lastError).toContain('the fake embedder is down');
    expect(failed.pausedUntil).not.toBeNull();
    // A query is refused by nothing: it says the answer is incomplete.
    fake.failNext = 0;
    const partial = await semantic(act, 'paragraph');
    expect(partial.complete).toBe(false);
    expect(partial.note).toContain('8 blocks are not embedded yet (4 failed)');
    expect(await act('embeddings_retry_failed', {})).toMatchObject({ retried: 4 });
    const done = await embedded(act);
    expect(done.indexed).toBe(8);
    expect((await semantic(act, 'paragraph')).complete).toBe(true);
  });

  it('says an embedding pass it stopped at a cancel was stopped, so its job ends cancelled, not succeeded', async () => {
    const fake = await fakeServer();
    let release!: () => void;
    const held = new Promise<void>((resolve) => { release = resolve; });
    fake.beforeAnswer = () => held;
    const { kernel, act } = await boot(fake, { semantic: { batchSize: 4 } });
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    await act('document_create', { notebook: notebook.id, title: 'Many', markdown: Array.from({ length: 40 }, (_, i) => `paragraph number ${i} of many`).join('\n\n') });
    // Taken in, and the first batch at the embedder (held there).
    await until('the blocks are taken in', async () => ((await act<Status>('embeddings_status', {})).pending >= 40 ? true : undefined));
    const answer = act<{ outcome: string; stopped?: string }>('embeddings_index', {});
    const job = await until('the index job runs', async () => kernel.jobs.list().find((item) => item.action === 'embeddings_index' && item.state === 'running'));
    kernel.jobs.cancel(job.id);
    // The embedder answers only once the stop reached the call: the pass it waits for is not waited out.
    await until('the stop reached the call', async () => kernel.jobs.get(job.id).stopped);
    release();
    expect(await answer).toMatchObject({ outcome: 'stopped', stopped: 'cancelled' });
    expect(await until('the job ended', async () => { const record = kernel.jobs.get(job.id); return record.state === 'running' ? undefined : record; })).toMatchObject({ state: 'cancelled', stopped: 'cancelled' });
  });

  it('pauses, sending no block alone, when the embedder refuses every request (a misspelt model)', async () => {
    const fake = await fakeServer();
    const { act } = await boot(fake, { semantic: { retry: { baseMs: 20, maxMs: 60_000, maxFailures: 3, pauseMs: 60_000 } } });
    fake.noSuchModel = true;
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    await act('document_create', { notebook: notebook.id, title: 'Typo', markdown: Array.from({ length: 7 }, (_, i) => `paragraph ${i}`).join('\n\n') });
    const paused = await until('the indexer paused', async () => {
      const status = await act<Status & { pausedUntil: string | null }>('embeddings_status', {});
      return status.pausedUntil !== null ? status : undefined;
    });
    expect(paused.lastError).toContain('does not exist');
    // One batch (of 4) sent, refused: not each of its blocks again one by one.
    expect(fake.requests).toHaveLength(1);
  });

  it('embeds the rest of a batch when the embedder refuses one of its texts, and gives up only that one, without pausing', async () => {
    const fake = await fakeServer();
    const { act } = await boot(fake);
    fake.rejectText = (text) => text.includes('POISON');
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    const paragraphs = Array.from({ length: 7 }, (_, i) => `healthy paragraph number ${i}`);
    await act('document_create', { notebook: notebook.id, title: 'Mixed', markdown: [...paragraphs.slice(0, 3), 'a POISON paragraph too long for the model', ...paragraphs.slice(3)].join('\n\n') });
    const status = await until('every block embedded or given up', async () => {
      const current = await act<Status>('embeddings_status', {});
      return current.gaveUp === 1 && current.pending === 0 && current.queued === 0 ? current : undefined;
    });
    // The document's own block and the seven healthy paragraphs.
    expect(status.indexed).toBe(8);
    expect(status.failed).toBe(1);
    expect((await semantic(act, 'healthy paragraph number 5')).results[0]!.snippet).toBe('healthy paragraph number 5');
  });

  it('pauses as after a failed call when the store cannot keep the vectors, instead of sending the batch again at every write', async () => {
    const fake = await fakeServer();
    const { act, kernel } = await boot(fake, { semantic: { retry: { baseMs: 20, maxMs: 60_000, maxFailures: 3, pauseMs: 60_000 } } });
    const db = new Database(join(kernel.workspace.root, 'index', 'embeddings.db'));
    db.exec("CREATE TRIGGER full_disk BEFORE INSERT ON embedding_vectors BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END;");
    db.close();
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    const doc = await act<Created>('document_create', { notebook: notebook.id, title: 'Full', markdown: 'a paragraph the store cannot keep' });
    const paused = await until('the indexer paused', async () => {
      const status = await act<Status & { pausedUntil: string | null }>('embeddings_status', {});
      return status.pausedUntil !== null && status.lastError?.includes('disk is full') ? status : undefined;
    });
    expect(paused.indexed).toBe(0);
    const sent = fake.requests.length;
    for (let i = 0; i < 10; i++) await act('block_append', { parentId: doc.id, markdown: `more text ${i}` });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(fake.requests.length).toBe(sent);
  });

  it('waits for the query\'s vector no longer than queryTimeoutMs: semantic search says the embedder did not answer (503), hybrid answers from full text', async () => {
    const fake = await fakeServer();
    const { act } = await boot(fake, { semantic: { queryTimeoutMs: 300 } });
    const notebook = await act<Created>('notebook_create', { name: 'Garden' });
    await act('document_create', { notebook: notebook.id, title: 'Plants', markdown: GARDEN });
    await embedded(act);
    fake.holdIf = (input) => input.includes('warm soil');
    const refused = await caught(semantic(act, 'warm soil'));
    expect(refused).toMatchObject({ code: 'MODEL_UNAVAILABLE', details: { field: 'plugins.search-semantic.config.embedder', embedder: 'providers/openai' } });
    expect(refused.message).toContain('within 300 ms');
    const hybrid = await act<{ fellBackToFulltext: boolean; note?: string; results: { snippet: string }[] }>('search_hybrid', { query: 'warm soil' });
    expect(hybrid.fellBackToFulltext).toBe(true);
    expect(hybrid.note).toContain('did not embed the query within 300 ms');
    expect(hybrid.results[0]!.snippet).toContain('<mark>warm</mark>');
    // The search right after did not wait for the embedder again: told at once, for the next 30 s.
    expect(hybrid.note).toMatch(/it is asked again in \d+ s/);
    expect(fake.requests.filter((input) => input.includes('warm soil'))).toHaveLength(1);
  });

  it('says an embedder that fails the query is the embedder\'s failure, naming it (503), not an internal error', async () => {
    const fake = await fakeServer();
    const { act } = await boot(fake);
    const notebook = await act<Created>('notebook_create', { name: 'Garden' });
    await act('document_create', { notebook: notebook.id, title: 'Plants', markdown: GARDEN });
    await embedded(act);
    // A query the embedder refuses (too long for its model) says nothing of the next one.
    fake.rejectText = (text) => text === 'a query it refuses';
    expect((await caught(semantic(act, 'a query it refuses'))).code).toBe('MODEL_UNAVAILABLE');
    expect((await semantic(act, 'quick brown fox')).results[0]!.snippet).toContain('fox');
    fake.rejectText = undefined;
    // A vector of zeros for the query points nowhere: it answered blocks in an arbitrary order as its nearest.
    fake.corrupt = 'zeros';
    const zeros = await caught(semantic(act, 'cold frame'));
    expect(zeros.code).toBe('MODEL_UNAVAILABLE');
    expect(zeros.message).toContain('the embedder providers/openai answered a vector for the query that is all zeros: no block can be compared with it');
    fake.corrupt = undefined;
    fake.down = true;
    const refused = await caught(semantic(act, 'warm soil'));
    expect(refused).toMatchObject({ code: 'MODEL_UNAVAILABLE', details: { embedder: 'providers/openai' } });
    expect(refused.message).toContain('the embedder providers/openai could not embed the query: ');
  });

  it('gives a block up after maxFailures while the embedder stays down', async () => {
    const fake = await fakeServer();
    const { act } = await boot(fake);
    fake.down = true;
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    await act('document_create', { notebook: notebook.id, title: 'Down', markdown: 'the embedder is down today' });
    const status = await until('both blocks given up', async () => {
      const current = await act<Status>('embeddings_status', {});
      return current.gaveUp === 2 ? current : undefined;
    });
    expect(status.failed).toBe(2);
    // maxFailures 3 per block, 2 blocks in one batch: three calls, then nothing more.
    expect(fake.requests).toHaveLength(3);
  });
});
