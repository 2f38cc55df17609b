import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { UserPlugin } from '../../helpers/harness.js';
import { caught } from '../../helpers/harness.js';
import { admin, gardenCorpus, reader, text, useHybrid, type HybridAnswer } from '../search-fulltext/hybrid-harness.js';
import type { Act } from '../blocks/blocks-harness.js';

const { boot, tempDir } = useHybrid();

interface Reranked { reranked: boolean; note?: string; model?: string; results: { id: string; rank: number; score?: number }[]; missing: string[] }

/** A local reranker that misbehaves as its config says: throws, answers one score short, or NaN. */
const BROKEN_RERANKER: UserPlugin = {
  manifest: {
    id: 'broken-rerank', version: '0.1.0', kernel: '^0.1.0', description: 'a reranker that misbehaves', entry: 'index.js', tools: [],
    config: { type: 'object', properties: { fault: { enum: ['throws', 'short', 'nan', 'hangs'] } } },
    rerankers: [{ name: 'broken', description: 'misbehaves locally', effects: [] }],
  },
  code: `export default { activate(ctx) {
  ctx.provideBackend('reranker', 'broken', { id: 'broken', model: 'broken-1', async rerank(query, documents) {
    if (ctx.config.fault === 'throws') throw new Error('model file is damaged');
    if (ctx.config.fault === 'hangs') return new Promise(() => {});
    if (ctx.config.fault === 'short') return documents.slice(1).map(() => 1);
    return documents.map(() => NaN);
  } });
  return {};
} };`,
};

/** The ids of the Garden notebook's paragraphs, by text, in document order. */
async function paragraphs(act: Act): Promise<Map<string, string>> {
  const found = await act<{ results: { id: string; snippet: string }[] }>('search_fulltext', { query: 'tomatoes OR vegetables OR fox OR soup', types: ['paragraph', 'heading'], pageSize: 100 });
  return new Map(found.results.map((hit) => [text(hit), hit.id]));
}

describe('the rerank plugin', () => {
  it('orders blocks by the selected reranker, reading their text from the index', async () => {
    const { act, fake } = await boot({ semantic: false, remoteReranker: 'cohere' });
    await gardenCorpus(act);
    const ids = await paragraphs(act);
    const given = ['The quick brown fox jumps over the lazy dog.', 'Tomatoes need warm soil and full sun.', 'Basil grows well beside tomatoes.'].map((key) => ids.get(key)!);
    const answer = await act<Reranked>('rerank_rerank', { query: 'tomatoes', ids: given });
    expect(answer).toMatchObject({ reranked: true, model: 'rerank-test', missing: [] });
    expect(answer.results.map((hit) => hit.id)).toEqual([given[2], given[1], given[0]]);
    expect(answer.results.map((hit) => hit.rank)).toEqual([1, 2, 3]);
    expect(fake!.requests[0]!.body).toEqual({ model: 'rerank-test', query: 'tomatoes', documents: ['The quick brown fox jumps over the lazy dog.', 'Tomatoes need warm soil and full sun.', 'Basil grows well beside tomatoes.'] });
  });

  it('keeps the given order and says why on any failure of the reranker, and does not call it for fewer than 2', async () => {
    const { act, fake } = await boot({ semantic: false, remoteReranker: 'cohere' });
    await gardenCorpus(act);
    const ids = await paragraphs(act);
    const given = [...ids.values()].slice(0, 4);
    const cases = [
      ['one-short', 'answered 3 scores for 4 documents'],
      ['duplicate-index', 'answered the index'],
      ['index-out-of-range', 'outside 0..3'],
      ['http-500', 'HTTP 500'],
      ['not-json', 'not JSON'],
    ] as const;
    for (const [behaviour, note] of cases) {
      fake!.script.push(behaviour);
      const answer = await act<Reranked>('rerank_rerank', { query: 'tomatoes', ids: given });
      expect([behaviour, answer.reranked, answer.results.map((hit) => hit.id)]).toEqual([behaviour, false, given]);
      expect(answer.note).toMatch(/^the reranker providers\/http failed, the fused order is kept: /);
      expect(answer.note).toContain(note);
    }
    const calls = fake!.requests.length;
    const single = await act<Reranked>('rerank_rerank', { query: 'tomatoes', ids: [given[0]!] });
    expect(single).toMatchObject({ reranked: false, note: 'not reranked: fewer than 2 candidates', results: [{ id: given[0], rank: 1 }] });
    expect(fake!.requests.length).toBe(calls);
  });

  it('keeps the given order when a local reranker throws, answers a wrong count, NaN, or takes too long', async () => {
    for (const [fault, note] of [['throws', 'model file is damaged'], ['short', 'answered 3 scores for 4 documents'], ['nan', 'answered the score null for document 0'], ['hangs', 'did not answer within 200 ms']] as const) {
      const { act } = await boot({
        semantic: false, userPlugins: { 'broken-rerank': BROKEN_RERANKER },
        plugins: { 'broken-rerank': { trusted: true, config: { fault } }, rerank: { config: { reranker: 'broken-rerank', timeoutMs: 200 } } },
      });
      await gardenCorpus(act);
      const given = [...(await paragraphs(act)).values()].slice(0, 4);
      const answer = await act<Reranked>('rerank_rerank', { query: 'tomatoes', ids: given });
      expect([fault, answer.reranked, answer.results.map((hit) => hit.id)]).toEqual([fault, false, given]);
      expect(answer.note).toContain(note);
    }
  });

  it('does not ask a reranker that timed out again until retryAfterMs has passed: searches keep the fused order at once, saying so', async () => {
    const { act } = await boot({
      semantic: false, userPlugins: { 'broken-rerank': BROKEN_RERANKER },
      plugins: { 'broken-rerank': { trusted: true, config: { fault: 'hangs' } }, rerank: { config: { reranker: 'broken-rerank', timeoutMs: 200, retryAfterMs: 1000 } } },
    });
    await gardenCorpus(act);
    const given = [...(await paragraphs(act)).values()].slice(0, 4);
    const ask = () => act<Reranked>('rerank_rerank', { query: 'tomatoes', ids: given });
    expect((await ask()).note).toContain('did not answer within 200 ms');
    // Each search waited the whole timeout for a reranker that had stopped answering (30 s by default).
    const resting = await ask();
    expect([resting.reranked, resting.results.map((hit) => hit.id)]).toEqual([false, given]);
    expect(resting.note).toMatch(/^not reranked: the reranker broken-rerank\/broken did not answer within 200 ms lately; it is asked again from \d{4}-/);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    // Its rest over, one search asks it; the others at the same time keep resting it (each waited the timeout).
    const notes = (await Promise.all([ask(), ask(), ask()])).map((answer) => answer.note ?? '');
    expect(notes.filter((note) => note.includes('the reranker broken-rerank/broken failed, the fused order is kept: the reranker did not answer within 200 ms'))).toHaveLength(1);
    expect(notes.filter((note) => note.startsWith('not reranked: the reranker broken-rerank/broken did not answer within 200 ms lately'))).toHaveLength(2);
  });

  it('treats blocks a reader may not see as missing, and never sends their text', async () => {
    // A reader may call only actions without effects: the reranker is a local one.
    const { act } = await boot({ semantic: false, localReranker: true });
    const { secret } = await gardenCorpus(act);
    const found = await act<{ results: { id: string; notebook: string }[] }>('search_fulltext', { query: 'tomatoes' });
    const hidden = found.results.find((hit) => hit.notebook === secret)!.id;
    const shown = found.results.filter((hit) => hit.notebook !== secret).map((hit) => hit.id);
    const answer = await act<Reranked>('rerank_rerank', { query: 'tomatoes', ids: [hidden, ...shown, '20200101000000-abcdefg'] }, reader);
    expect(answer.missing).toEqual([hidden, '20200101000000-abcdefg']);
    expect(answer.results.map((hit) => hit.id).sort()).toEqual([...shown].sort());
    const seen = (globalThis as { __shortFirstSeen?: string[] }).__shortFirstSeen!;
    expect(seen.length).toBe(shown.length);
    expect(seen.filter((document) => document.includes('Secret'))).toEqual([]);
    expect((await act<Reranked>('rerank_rerank', { query: 'tomatoes', ids: [hidden] }, admin)).missing).toEqual([]);
  });

  it('says reranking is off without a reranker, and refuses a reference that is not a plugin id', async () => {
    const { act } = await boot({ semantic: false });
    await gardenCorpus(act);
    const given = [...(await paragraphs(act)).values()].slice(0, 2);
    expect(await act<Reranked>('rerank_rerank', { query: 'q', ids: given })).toMatchObject({ reranked: false, note: 'not reranked: no reranker is configured (plugins.rerank.config.reranker)' });
    const error = await caught(boot({ semantic: false, plugins: { rerank: { config: { reranker: 'Not A Plugin' } } } }));
    expect(error.message).toContain("plugins.rerank.config.reranker: 'Not A Plugin' is not '<plugin id>'");
  });
});

describe('a notebook marked egress: local-only', () => {
  it('is never sent to a remote reranker: its blocks keep their places, the others are reranked around them', async () => {
    const workspace = join(await tempDir(), 'workspace');
    const first = await boot({ semantic: false, workspace });
    const { secret } = await gardenCorpus(first.act);
    await first.kernel.close();
    const conf = join(workspace, 'data', secret, '.notebook.json');
    await writeFile(conf, JSON.stringify({ ...JSON.parse(await readFile(conf, 'utf8')) as object, egress: 'local-only' }));
    const { act, fake } = await boot({ remoteReranker: 'cohere', workspace });
    const found = await act<{ results: { id: string; notebook: string }[] }>('search_fulltext', { query: 'tomatoes' });
    const local = found.results.find((hit) => hit.notebook === secret)!.id;
    const others = found.results.filter((hit) => hit.notebook !== secret).map((hit) => hit.id);
    const answer = await act<Reranked>('rerank_rerank', { query: 'tomatoes', ids: [local, ...others] });
    expect(answer).toMatchObject({ reranked: true, note: '1 candidates in local-only notebooks were not sent to the remote reranker and kept their places' });
    expect(answer.results[0]).toEqual({ id: local, rank: 1 });
    expect(fake!.requests[0]!.body.documents).toHaveLength(others.length);
    const hybrid = await act<HybridAnswer>('search_hybrid', { query: 'tomatoes secret' });
    expect(hybrid.results.map((hit) => hit.notebook)).toContain(secret);
    expect(JSON.stringify(fake!.requests)).not.toContain('Secret');
  });
});

describe('hybrid search with a reranker', () => {
  it('reranks the fused head and records each block\'s rerank rank and score', async () => {
    const { act, fake } = await boot({ remoteReranker: 'jina' });
    await gardenCorpus(act);
    const found = await act<HybridAnswer>('search_hybrid', { query: 'tomatoes' });
    expect(found.arms.rerank).toEqual({ ran: true, candidates: 5, model: 'rerank-test' });
    // candidates: 5. The fake puts texts with the word first, shortest first.
    expect(found.results.slice(0, 2).map(text)).toEqual(['Planting tomatoes', 'Basil grows well beside tomatoes.']);
    // Two texts of 37 characters score the same: they keep their fused order, whichever it is.
    expect(found.results.slice(2, 4).map(text).sort()).toEqual(['Secret tomatoes plans for the garden.', 'Tomatoes need warm soil and full sun.']);
    expect(found.results.slice(0, 5).map((hit) => hit.arms.rerank?.rank)).toEqual([1, 2, 3, 4, 5]);
    expect(found.results.slice(5).every((hit) => hit.arms.rerank === undefined)).toBe(true);
    expect(fake!.requests).toHaveLength(1);
    expect((fake!.requests[0]!.body.documents as string[])).toHaveLength(5);
    // A page past the reranked head does not call the reranker.
    await act('search_hybrid', { query: 'tomatoes', page: 2, pageSize: 5 });
    expect(fake!.requests).toHaveLength(1);
  });

  it('keeps the fused order when the reranker fails, and says so', async () => {
    const { act, fake } = await boot({ remoteReranker: 'voyage' });
    await gardenCorpus(act);
    const fused = await act<HybridAnswer>('search_hybrid', { query: 'tomatoes', page: 2, pageSize: 5 });
    expect(fused.arms.rerank.ran).toBe(false);
    fake!.script.push('duplicate-index');
    const found = await act<HybridAnswer>('search_hybrid', { query: 'tomatoes' });
    expect(found.arms.rerank).toMatchObject({ ran: false, reason: expect.stringContaining('the fused order is kept') });
    expect(found.note).toContain('answered the index');
    expect(found.results.every((hit) => hit.arms.rerank === undefined)).toBe(true);
    expect(found.results.map((hit) => hit.score)).toEqual([...found.results.map((hit) => hit.score)].sort((a, b) => b - a));
  });
});
