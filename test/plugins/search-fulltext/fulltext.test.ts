import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpServer, type RunningServer } from '../../../core/http/serve.js';
import { caught } from '../../helpers/harness.js';
import { rawRequest } from '../../helpers/http-client.js';
import type { Principal } from '../../../core/plugin-api.js';
import { agent, reader, useBlocks, type Act } from '../blocks/blocks-harness.js';

const { boot } = useBlocks();

interface Created { id: string }
interface Hit { id: string; documentId: string; notebook: string; type: string; snippet: string; score: number }
interface Found { total: number; results: Hit[]; documents: { documentId: string; hits: number }[] }

function search(act: Act, query: string, extra: Record<string, unknown> = {}, principal?: Principal): Promise<Found> {
  return act<Found>('search_fulltext', { query, ...extra }, principal);
}

async function corpus(act: Act) {
  const notebook = await act<Created>('notebook_create', { name: 'Notes', access: 'published' });
  const doc = await act<Created>('document_create', { notebook: notebook.id, title: 'Garden', markdown: [
    '# Planting tomatoes',
    'Tomatoes need warm soil and full sun.',
    'Basil grows well beside tomatoes.',
    'The quick brown fox jumps over the lazy dog.',
    'Crème brûlée is a dessert, not a vegetable.',
    '我喜欢读书和写作。',
    '東京タワーに行きました。',
    '- [ ] water the tomatoes',
  ].join('\n\n') });
  return { notebook: notebook.id, doc: doc.id };
}

describe('full-text search: the query language', () => {
  it('requires every word, and supports phrases, prefixes, OR and exclusion', async () => {
    const { act } = await boot();
    await corpus(act);
    const texts = async (query: string) => (await search(act, query)).results.map((hit) => hit.snippet.replace(/<\/?mark>/g, '')).sort();
    expect(await texts('tomatoes sun')).toEqual(['Tomatoes need warm soil and full sun.']);
    expect(await texts('"brown fox"')).toEqual(['The quick brown fox jumps over the lazy dog.']);
    expect(await texts('"fox brown"')).toEqual([]);
    expect(await texts('veg*')).toEqual(['Crème brûlée is a dessert, not a vegetable.']);
    expect(await texts('basil OR fox')).toHaveLength(2);
    expect(await texts('tomatoes -basil -water')).toEqual(['Planting tomatoes', 'Tomatoes need warm soil and full sun.']);
  });

  it('finds text in scripts without spaces by any part of it, and ignores case and accents', async () => {
    const { act } = await boot();
    await corpus(act);
    for (const [query, expected] of [['读书', '我喜欢读书和写作。'], ['书和写', '我喜欢读书和写作。'], ['タワー', '東京タワーに行きました。'],
      ['creme brulee', 'Crème brûlée is a dessert, not a vegetable.'], ['TOMATOES SUN', 'Tomatoes need warm soil and full sun.']] as const) {
      const found = await search(act, query);
      expect([query, found.results.map((hit) => hit.snippet.replace(/<\/?mark>/g, ''))]).toEqual([query, [expected]]);
    }
    expect((await search(act, 'creme')).results[0]!.snippet).toBe('<mark>Crème</mark> brûlée is a dessert, not a vegetable.');
    expect((await search(act, '读书')).results[0]!.snippet).toBe('我喜欢<mark>读书</mark>和写作。');
  });

  it('folds compatibility forms and look-alike letters, and finds Korean and Thai by any part', async () => {
    const { act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    await act('document_create', { notebook: notebook.id, title: 'T', markdown: 'ＦＵＬＬ ｗｉｄｔｈ letters\n\nﾀﾜｰ in half width\n\nØresund and Łódź\n\n한국어를 공부합니다\n\nภาษาไทยง่ายมาก' });
    for (const [query, fragment] of [['full width', 'ＦＵＬＬ'], ['タワー', 'ﾀﾜｰ'], ['oresund', 'Øresund'], ['lodz', 'Łódź'], ['공부', '공부'], ['ไทย', 'ไทย']] as const) {
      const found = await search(act, query);
      expect([query, found.results.map((hit) => hit.snippet)]).toEqual([query, [expect.stringContaining(`<mark>${fragment}</mark>`)]]);
    }
  });

  it('never answers with an FTS5 syntax error, whatever is typed', async () => {
    const { act } = await boot();
    await corpus(act);
    const hostile = ['"', '""', '(', ')', '*', '**', 'NEAR(a b)', 'AND', 'NOT', 'OR', 'OR OR', 'a OR', 'OR a', '-', '--a', '{content}: x', 'content:tomatoes',
      '^tomatoes', 'tomatoes"', '"tomatoes', "'", '\\', 'a AND NOT b', 'x NEAR/2 y', '\u0000', '🍅', 'tom*at*oes', '"a" * "b"', ':', '[', '}', 'rowid=1',
      'tomato\u0000', 'tomato a\u0000b', '"tomato\u0000soup"', 'to*', '\u0007bell'];
    for (const query of hostile) {
      const outcome = await search(act, query).then((found) => 'ok:' + String(found.total), (error: { code?: string }) => error.code ?? 'none');
      expect([query, outcome]).toEqual([query, expect.stringMatching(/^(ok:\d+|INVALID_INPUT)$/)]);
    }
    expect((await caught(search(act, '-tomatoes'))).message).toContain('besides the excluded');
    expect((await caught(search(act, 'to*'))).message).toContain('too short a prefix');
    // The prefix as the index reads it: the last word of the term, whatever comes before it.
    for (const query of ['".a"*', '"x a"*', 'x-a*', '中a*', '"tomatoes s"*']) expect([query, (await caught(search(act, query))).message]).toEqual([query, expect.stringContaining('too short a prefix')]);
    for (const query of ['"x tom"*', '中文*']) expect([query, await search(act, query).then(() => 'ok', (error: Error) => error.message)]).toEqual([query, 'ok']);
    expect((await search(act, 'tomatoes\u0000')).total).toBe(4);
  });
});

describe('full-text search: filters, paging and ranking', () => {
  it('gives the same answers whether filters are joined or matched in the FTS table', async () => {
    const answers: unknown[] = [];
    for (const joinBelow of [0, 1_000_000]) {
      const { act } = await boot({ config: { plugins: { 'search-fulltext': { config: { joinBelow } } } } });
      const { notebook, doc } = await corpus(act);
      const child = await act<Created>('document_create', { notebook, title: 'Child tomatoes', parentId: doc, markdown: '## tomatoes\n\n- tomatoes listed' });
      const other = await act<Created>('notebook_create', { name: 'Other', access: 'published' });
      await act('document_create', { notebook: other.id, title: 'Elsewhere', markdown: 'tomatoes elsewhere' });
      const ids = new Map<string, string>([[notebook, 'NB'], [doc, 'DOC'], [child.id, 'CHILD'], [other.id, 'OTHER']]);
      const filters: Record<string, unknown>[] = [{ notebooks: [notebook] }, { notebooks: [other.id] }, { path: doc }, { path: `${notebook}/${doc}/${child.id}` },
        { types: ['heading', 'document'] }, { subtypes: ['h2'] }, { notebooks: [notebook], types: ['paragraph'], path: doc }];
      const round: unknown[] = [];
      for (const filter of filters) {
        const found = await search(act, 'tomatoes', filter);
        round.push({ total: found.total, results: found.results.map((hit) => [ids.get(hit.documentId) ?? 'other', hit.type, hit.snippet]).sort() });
      }
      answers.push(round);
    }
    expect(answers[0]).toEqual(answers[1]);
    // Subtypes match exactly in both plans: 'c' is not 'c++'.
    for (const joinBelow of [0, 1_000_000]) {
      const { act } = await boot({ config: { plugins: { 'search-fulltext': { config: { joinBelow } } } } });
      const notebook = await act<Created>('notebook_create', { name: 'N' });
      await act('document_create', { notebook: notebook.id, title: 'Code', markdown: '```c\nint kiwi;\n```\n\n```c++\nint kiwi;\n```\n\n```objective-c\nint kiwi;\n```' });
      const found = await search(act, 'kiwi', { subtypes: ['c'] });
      expect([joinBelow, found.results.map((hit) => hit.type)]).toEqual([joinBelow, ['code']]);
      expect((await search(act, 'kiwi', { subtypes: ['C'] })).total).toBe(0);
    }
    expect((answers[0] as { total: number }[]).map((answer) => answer.total)).toEqual([7, 1, 7, 3, 3, 1, 4]);
  });

  it('filters by notebook, by document subtree, by type and subtype', async () => {
    const { act } = await boot();
    const { notebook, doc } = await corpus(act);
    const other = await act<Created>('notebook_create', { name: 'Other' });
    const child = await act<Created>('document_create', { notebook: notebook, title: 'Child', parentId: doc, markdown: 'more tomatoes here' });
    await act('document_create', { notebook: other.id, title: 'Elsewhere', markdown: 'tomatoes elsewhere' });
    expect((await search(act, 'tomatoes')).total).toBe(6);
    expect((await search(act, 'tomatoes', { notebooks: [other.id] })).total).toBe(1);
    expect((await search(act, 'tomatoes', { path: child.id })).results.map((hit) => hit.documentId)).toEqual([child.id]);
    expect((await search(act, 'tomatoes', { path: `${notebook}/${doc}` })).total).toBe(5);
    expect((await search(act, 'tomatoes', { types: ['heading'] })).results.map((hit) => hit.type)).toEqual(['heading']);
    expect((await search(act, 'tomatoes', { subtypes: ['h1'] })).total).toBe(1);
    expect((await search(act, 'paragraph')).total).toBe(0);
  });

  it('pages results with a total and counts per document, and caps the page size', async () => {
    const { act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    const a = await act<Created>('document_create', { notebook: notebook.id, title: 'A', markdown: Array.from({ length: 30 }, (_, i) => `apple ${i}`).join('\n\n') });
    const b = await act<Created>('document_create', { notebook: notebook.id, title: 'B', markdown: 'apple pie' });
    const first = await search(act, 'apple', { pageSize: 20 });
    const second = await search(act, 'apple', { pageSize: 20, page: 2 });
    expect([first.total, first.results.length, second.results.length]).toEqual([31, 20, 11]);
    expect(new Set([...first.results, ...second.results].map((hit) => hit.id)).size).toBe(31);
    expect(first.documents).toEqual([expect.objectContaining({ documentId: a.id, hits: 30 }), expect.objectContaining({ documentId: b.id, hits: 1 })]);
    expect((await caught(search(act, 'apple', { pageSize: 101 }))).code).toBe('INVALID_INPUT');
  });

  it('counts hits per document unasked below 1,000 hits, and above only when documentCounts is set', async () => {
    const { act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    const a = await act<Created>('document_create', { notebook: notebook.id, title: 'A', markdown: Array.from({ length: 700 }, (_, i) => `pear ${i}`).join('\n\n') });
    const b = await act<Created>('document_create', { notebook: notebook.id, title: 'B', markdown: Array.from({ length: 400 }, (_, i) => `pear ${i}${i < 5 ? ' plum' : ''}`).join('\n\n') });
    type Counted = Found & { documentsCountedOver: number; rankedOver: number };
    const many = await search(act, 'pear') as Counted;
    expect([many.total, many.results.length, many.documents, many.documentsCountedOver, many.rankedOver]).toEqual([1100, 20, [], 0, 1100]);
    const asked = await search(act, 'pear', { documentCounts: true }) as Counted;
    expect([asked.documents, asked.documentsCountedOver]).toEqual([[{ documentId: a.id, hpath: '/A', hits: 700 }, { documentId: b.id, hpath: '/B', hits: 400 }], 1100]);
    // The page is the same whichever way it was found.
    expect(asked.results.map((hit) => hit.id)).toEqual(many.results.map((hit) => hit.id));
    const few = await search(act, 'plum') as Counted;
    expect([few.total, few.documents, few.documentsCountedOver]).toEqual([5, [{ documentId: b.id, hpath: '/B', hits: 5 }], 5]);
  });

  it('lists a word with more hits than manyHits unranked, last added first, and ranks it when documents are counted', async () => {
    const { act } = await boot({ config: { plugins: { 'search-fulltext': { config: { manyHits: 10 } } } } });
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    await act<Created>('document_create', { notebook: notebook.id, title: 'A', markdown: Array.from({ length: 12 }, (_, i) => `fig ${i}`).join('\n\n') });
    const later = await act<Created>('document_create', { notebook: notebook.id, title: 'B', markdown: 'fig fig fig late' });
    type Ranked = Found & { rankedOver: number };
    const many = await search(act, 'fig', { pageSize: 3 }) as Ranked;
    expect([many.total, many.rankedOver, many.results.map((hit) => hit.documentId)[0], many.results.map((hit) => hit.score)]).toEqual([13, 0, later.id, [0, 0, 0]]);
    const ranked = await search(act, 'fig', { pageSize: 3, documentCounts: true }) as Ranked;
    expect([ranked.rankedOver, ranked.results[0]!.documentId, ranked.results[0]!.score > 0]).toEqual([13, later.id, true]);
    const few = await search(act, 'late') as Ranked;
    expect([few.total, few.rankedOver]).toEqual([1, 1]);
  });

  it('keeps its promises when a phrase\'s hits are bunched where the first passes misjudge how many there are', async () => {
    // A phrase is estimated, not counted first. 150 hits in the first 150 of 2,150 blocks: the first 101
    // lie as densely as if every block held one, about 2,150 hits, more than manyHits (1,000): the exact
    // count must set the answer right.
    const { act } = await boot({ config: { plugins: { 'search-fulltext': { config: { manyHits: 1_000 } } } } });
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    const early = await act<Created>('document_create', { notebook: notebook.id, title: 'Early', markdown: Array.from({ length: 150 }, (_, i) => `quince jelly ${i}`).join('\n\n') });
    await act<Created>('document_create', { notebook: notebook.id, title: 'Late', markdown: Array.from({ length: 2_000 }, (_, i) => `apricot tart ${i}`).join('\n\n') });
    type Counted = Found & { documentsCountedOver: number; rankedOver: number };
    const bunched = await search(act, '"quince jelly"', { pageSize: 5 }) as Counted;
    expect([bunched.total, bunched.rankedOver, bunched.documentsCountedOver, bunched.documents]).toEqual([150, 150, 150, [{ documentId: early.id, hpath: '/Early', hits: 150 }]]);
    expect(bunched.results.every((hit) => hit.score > 0)).toBe(true);
    // 2,000 hits, as dense where they are: more than manyHits, unranked, not counted per document.
    const spread = await search(act, '"apricot tart"', { pageSize: 5 }) as Counted;
    expect([spread.total, spread.rankedOver, spread.documentsCountedOver, spread.results.map((hit) => hit.score)]).toEqual([2_000, 0, 0, [0, 0, 0, 0, 0]]);
  });

  it("ranks a hit in a block's name above one in its text", async () => {
    const { act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    const doc = await act<Created>('document_create', { notebook: notebook.id, title: 'D', markdown: 'zebra zebra zebra in the text\n\nplain block' });
    const blocks = (await act<{ document: { children: { id: string }[] } }>('document_get', { id: doc.id })).document.children;
    await act('attr_set', { id: blocks[1]!.id, attrs: { name: 'zebra' } });
    expect((await search(act, 'zebra')).results.map((hit) => hit.id)).toEqual([blocks[1]!.id, blocks[0]!.id]);
  });

  it('follows every write in the same transaction, and a rebuild gives the same answers', async () => {
    const { act } = await boot();
    const { doc } = await corpus(act);
    const basil = (await search(act, 'basil')).results[0]!;
    await act('block_update', { id: basil.id, markdown: 'Oregano grows well too.' });
    expect((await search(act, 'basil')).total).toBe(0);
    expect((await search(act, 'oregano')).results.map((hit) => hit.id)).toEqual([basil.id]);
    await act('document_rename', { id: doc, title: 'Allotment' });
    // Scores are relative: FTS5 keeps deleted rows' terms in its statistics until it merges segments.
    const answer = async () => {
      const found = await search(act, 'tomatoes OR allotment');
      return { ...found, results: found.results.map(({ score: _score, ...hit }) => hit) };
    };
    const before = await answer();
    expect(before.total).toBe(4);
    await act('index_rebuild', {});
    expect(await answer()).toEqual(before);
    await act('document_remove', { id: doc });
    expect((await search(act, 'tomatoes')).total).toBe(0);
  });
});

describe('full-text search and the agent\'s deny rules', () => {
  it('leaves out the notebooks a deny rule keeps the agent from, and refuses to search them by name', async () => {
    const first = await boot();
    const open = await first.act<Created>('notebook_create', { name: 'Open' });
    const guarded = await first.act<Created>('notebook_create', { name: 'Guarded' });
    await first.act('document_create', { notebook: open.id, title: 'O', markdown: 'pistachio open #nut#' });
    await first.act('document_create', { notebook: guarded.id, title: 'G', markdown: 'pistachio secret plan #nut#' });
    const root = first.kernel.workspace.root;
    await first.kernel.close();
    const { act } = await boot({ workspace: root, config: { gate: { deny: [{ tool: '*', notebook: guarded.id }] } } });
    const byAgent = agent();
    const found = await search(act, 'pistachio', {}, byAgent);
    expect(found.results.map((hit) => hit.notebook)).toEqual([open.id]);
    expect(JSON.stringify(found)).not.toContain('secret');
    // Searching a hidden notebook by name finds nothing, as in a notebook that does not exist.
    expect((await search(act, 'pistachio', { notebooks: [guarded.id] }, byAgent)).total).toBe(0);
    expect((await act<{ tags: { blocks: number }[] }>('tag_list', {}, byAgent)).tags).toEqual([{ tag: 'nut', blocks: 1 }]);
    expect((await act<{ notebooks: { id: string }[] }>('notebook_list', {}, byAgent)).notebooks.map((nb) => nb.id)).toEqual([open.id]);
    expect((await caught(act('sql_query', { sql: 'SELECT content FROM blocks' }, byAgent))).code).toBe('FORBIDDEN');
    expect((await search(act, 'pistachio')).total).toBe(2);
  });
});

describe('full-text search: what a reader must not see', () => {
  const servers: RunningServer[] = [];
  afterEach(async () => { for (const server of servers.splice(0)) await server.close(); });

  it('never returns private blocks, snippets or counts to a reader, for any filter', async () => {
    const { act } = await boot();
    const open = await act<Created>('notebook_create', { name: 'Open', access: 'published' });
    const closed = await act<Created>('notebook_create', { name: 'Closed' });
    const pub = await act<Created>('document_create', { notebook: open.id, title: 'Public', markdown: 'secret-free walnut' });
    const priv = await act<Created>('document_create', { notebook: closed.id, title: 'Private walnut', markdown: 'walnut salary figures\n\n## walnut heading' });
    const filters: Record<string, unknown>[] = [{}, { notebooks: [closed.id] }, { notebooks: [open.id, closed.id] }, { path: priv.id }, { path: `${closed.id}/${priv.id}` },
      { types: ['heading'] }, { types: ['paragraph', 'document'] }, { subtypes: ['h2'] }, { notebooks: [closed.id], types: ['heading'] }];
    for (const filter of filters) {
      const found = await search(act, 'walnut', filter, reader);
      const leaked = JSON.stringify(found);
      expect([filter, leaked.includes(closed.id) || leaked.includes(priv.id) || leaked.includes('salary') || leaked.includes('Private')]).toEqual([filter, false]);
      expect(found.results.every((hit) => hit.documentId === pub.id)).toBe(true);
      expect(found.total).toBe(found.results.length);
    }
    expect((await search(act, 'walnut')).total).toBe(4);
  });

  it("gives a reader scores that private notebooks do not move (bm25's counted every notebook's blocks)", async () => {
    const { act } = await boot();
    const open = await act<Created>('notebook_create', { name: 'Open', access: 'published' });
    const closed = await act<Created>('notebook_create', { name: 'Closed' });
    await act('document_create', { notebook: open.id, title: 'Birds', markdown: 'falcon open words here\n\n"project falcon" launch\n\nnothing here\n\nnor here' });
    const queries = ['falcon', '"project falcon"', 'falcon launch'];
    const seen = async () => Promise.all(queries.map(async (query) => (await search(act, query, {}, reader)).results.map((hit) => [hit.id, hit.score])));
    const before = await seen();
    expect(before[0]).toHaveLength(2);
    await act('document_create', { notebook: closed.id, title: 'Private', markdown: Array.from({ length: 21 }, (_, i) => `falcon project note ${i}`).join('\n\n') });
    expect(await seen()).toEqual(before);
    // The order is the rank's: 1 for the first, ½ for the second.
    expect(before[0]!.map(([, score]) => score)).toEqual([1, 0.5]);
    // The person is given bm25's scores.
    expect((await search(act, 'falcon')).results[0]!.score).not.toBe(1);
  });

  it('answers readers over HTTP with the same scope', async () => {
    const READER = 'qk_reader-search';
    const sha = createHash('sha256').update(READER).digest('hex');
    const { kernel, act } = await boot({ config: { auth: { tokens: [{ name: 'viewer', role: 'reader', sha256: sha }] } } });
    const server = await startHttpServer(kernel, { host: '127.0.0.1', port: 0 });
    servers.push(server);
    const closed = await act<Created>('notebook_create', { name: 'Closed' });
    await act('document_create', { notebook: closed.id, title: 'Hidden', markdown: 'pecan' });
    const response = await rawRequest(`${server.url}/api/actions/search-fulltext/search/fulltext`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${READER}` }, body: JSON.stringify({ query: 'pecan' }),
    });
    expect(response.status).toBe(200);
    expect(response.json().result).toMatchObject({ total: 0, results: [], documents: [] });
  });
});
