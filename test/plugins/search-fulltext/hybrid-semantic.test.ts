import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { gardenCorpus, text, useHybrid, type HybridAnswer } from './hybrid-harness.js';

const { boot } = useHybrid();

/** Three topics; a text's vector counts its words of each, plus a small constant so none is all zeros. */
const TOPICS = [['tomato', 'basil', 'soil', 'sun', 'vegetable', 'garden', 'grow', 'plant'], ['recipe', 'cook', 'soup', 'dessert', 'bake'], ['fox', 'dog', 'cat', 'animal']];
const vector = (input: string) => [...TOPICS.map((words) => words.filter((word) => input.toLowerCase().includes(word)).length), 0.01];

/** A loopback OpenAI-compatible `/v1/embeddings` that embeds whatever it is sent, and keeps the inputs. */
async function embeddingsServer(): Promise<{ url: string; inputs: string[]; close(): Promise<void> }> {
  const inputs: string[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { input: string[]; model: string };
      inputs.push(...body.input);
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
        object: 'list', model: body.model, usage: { prompt_tokens: 1, total_tokens: 1 },
        data: body.input.map((input, index) => ({ object: 'embedding', index, embedding: vector(input) })),
      }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, inputs,
    close: async () => { server.closeAllConnections(); await new Promise((resolve) => server.close(resolve)); },
  };
}

/** A kernel whose semantic arm embeds through the providers plugin, with `embeddings` as its OpenAI-compatible server. */
function bootWith(embeddings: { url: string }) {
  return boot({ semantic: false, plugins: {
    providers: { config: { embedder: { provider: 'openai', model: 'topics-4', baseURL: `${embeddings.url}/v1`, apiKeyEnv: false } } },
    'search-semantic': { config: { embedder: 'providers' } },
  } });
}

describe('hybrid search with the real search-semantic plugin', () => {
  const servers: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  it('fuses full text with semantic hits from an OpenAI-compatible embedder, end to end, within the filters', async () => {
    const embeddings = await embeddingsServer();
    servers.push(embeddings);
    const { act } = await bootWith(embeddings);
    const { secret } = await gardenCorpus(act);
    await act('embeddings_index', {});
    const found = await act<HybridAnswer>('search_hybrid', { query: 'tomatoes' });
    expect(found.fellBackToFulltext).toBe(false);
    expect(found.arms.semantic).toMatchObject({ ran: true, model: 'providers/openai:topics-4' });
    const semanticOnly = found.results.find((hit) => text(hit) === 'Vegetables want a sunny garden bed.');
    expect(semanticOnly?.arms).toEqual({ semantic: { rank: expect.any(Number), score: expect.any(Number) } });
    expect(found.results.filter((hit) => hit.arms.fulltext && hit.arms.semantic).length).toBeGreaterThanOrEqual(3);
    expect(embeddings.inputs).toContain('tomatoes');
    // Filtered to the Garden notebook, no arm returns the other one's block.
    const { garden } = await gardenCorpus(act);
    await act('embeddings_index', {});
    const filtered = await act<HybridAnswer>('search_hybrid', { query: 'tomatoes', notebooks: [garden] });
    expect(filtered.arms.semantic.ran).toBe(true);
    expect(filtered.results.length).toBeGreaterThan(0);
    expect(filtered.results.filter((hit) => hit.notebook !== garden)).toEqual([]);
    expect(found.results.some((hit) => hit.notebook === secret)).toBe(true);
  });

  it('pages one ranking: no block on two pages, none skipped, the same total on every page', async () => {
    const embeddings = await embeddingsServer();
    servers.push(embeddings);
    const { act } = await bootWith(embeddings);
    const notebook = await act<{ id: string }>('notebook_create', { name: 'Many' });
    // 150 blocks the word finds, ranked differently by each arm (lengths for full text, topic words for meaning).
    const paragraphs = Array.from({ length: 150 }, (_, i) => `tomato ${'filler '.repeat(i % 37)}${['soup', 'basil soil', 'dog', 'bake cook', 'sun garden grow'][i % 5]} number ${i}`);
    await act('document_create', { notebook: notebook.id, title: 'Many', markdown: paragraphs.join('\n\n') });
    await act('embeddings_index', {});
    const seen = new Map<string, number>();
    const totals = new Set<number>();
    const first = await act<HybridAnswer>('search_hybrid', { query: 'tomato basil', page: 1, pageSize: 20 });
    const pages = Math.ceil(first.total / 20);
    expect(pages).toBeGreaterThanOrEqual(3);
    for (let page = 1; page <= pages; page++) {
      const answer = await act<HybridAnswer>('search_hybrid', { query: 'tomato basil', page, pageSize: 20 });
      totals.add(answer.total);
      for (const hit of answer.results) {
        expect(seen.get(hit.id), `block ${hit.id} on page ${page} was on page ${seen.get(hit.id)}`).toBeUndefined();
        seen.set(hit.id, page);
      }
    }
    expect([...totals]).toEqual([first.total]);
    expect(seen.size).toBe(first.total);
    // Past the fused list: nothing, and said how to go deeper.
    const past = await act<HybridAnswer & { note?: string }>('search_hybrid', { query: 'tomato basil', page: pages + 1, pageSize: 20 });
    expect(past.results).toEqual([]);
    expect(past.note).toMatch(/larger depth/);
    // A deeper fusion, the same at each page, ranks more.
    const deeper = await act<HybridAnswer>('search_hybrid', { query: 'tomato basil', page: pages + 1, pageSize: 20, depth: 150 });
    expect(deeper.results.length).toBeGreaterThan(0);
  });
});
