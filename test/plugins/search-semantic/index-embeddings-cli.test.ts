import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CliProcess } from '../../helpers/cli-process.js';
import { useSemantic, type Created } from './semantic-harness.js';

const { boot, fakeServer } = useSemantic();

/** The built CLI (plain node: the HNSW index on its worker thread, as in production). */
async function run(args: string[]): Promise<{ code: number | null; output: string }> {
  const cli = CliProcess.start(args);
  const code = await cli.exited;
  return { code, output: cli.output };
}

/** A workspace of one document of six paragraphs (and its title) written without an embedder, then configured with the fake (batches of 2). */
async function toEmbed(title: string, paragraph: (i: number) => string, semantic: Record<string, unknown> = {}) {
  const first = await boot(undefined, { embedder: 'none' });
  const notebook = await first.act<Created>('notebook_create', { name: 'N' });
  await first.act('document_create', { notebook: notebook.id, title, markdown: Array.from({ length: 6 }, (_, i) => paragraph(i)).join('\n\n') });
  const root = first.kernel.workspace.root;
  await first.kernel.close();
  const fake = await fakeServer();
  await writeFile(join(root, 'quire.json'), JSON.stringify({
    plugins: {
      providers: { config: { embedder: { provider: 'openai', model: 'fake-embed', baseURL: fake.url, apiKeyEnv: false } } },
      'search-semantic': { config: { embedder: 'providers', batchSize: 2, ...semantic } },
    },
  }));
  return { root, fake };
}

describe('quire index embeddings', () => {
  it('embeds everything pending with a progress report, can reindex, and fails with the embedder\'s error', async () => {
    const { root, fake } = await toEmbed('Cli notes', (i) => `line number ${i} for the command`, { retry: { baseMs: 20, maxMs: 100, maxFailures: 2, pauseMs: 20 } });
    const done = await run(['index', 'embeddings', '-w', root]);
    expect([done.code, done.output]).toEqual([0, expect.stringMatching(/7 of 7 block\(s\) embedded with providers\/openai:fake-embed in [\d.]+ s; 0 pending, 0 failed/)]);
    expect(done.output).toContain('blocks embedded');
    expect(fake.texts).toHaveLength(7);
    const again = await run(['index', 'embeddings', '-w', root]);
    expect(again.code).toBe(0);
    expect(fake.texts).toHaveLength(7);
    const reindexed = await run(['index', 'embeddings', '--reindex', '-w', root]);
    expect(reindexed.code).toBe(0);
    expect(fake.texts).toHaveLength(14);
    // Both: --reindex embeds the failed ones too; taken as either, one was silently dropped.
    const both = await run(['index', 'embeddings', '--reindex', '--retry-failed', '-w', root]);
    expect([both.code, both.output]).toEqual([2, expect.stringContaining('give one of --reindex and --retry-failed')]);
    expect(fake.texts).toHaveLength(14);
    fake.down = true;
    const failed = await run(['index', 'embeddings', '--reindex', '-w', root]);
    expect(failed.code).toBe(1);
    expect(failed.output).toContain('the embedder failed: ');
    expect(failed.output).toContain('the fake embedder is down');
  });

  it('reports its progress while a pass runs, not only at its end', async () => {
    const { root, fake } = await toEmbed('Progress', (i) => `paragraph ${i} to embed`);
    const cli = CliProcess.start(['index', 'embeddings', '-w', root]);
    // The third batch waits until the command has said how far it is (at most 20 s): one pass embeds
    // every block due, and the count was said once it ended, so it waited the 20 s and said nothing.
    const partway = /\] \d+% [1-6]\/7 blocks embedded/;
    let saidWhileWaiting = false;
    fake.beforeAnswer = async () => {
      if (fake.requests.length !== 3) return;
      for (let waited = 0; !partway.test(cli.output) && waited < 20_000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
      saidWhileWaiting = partway.test(cli.output);
    };
    expect(await cli.exited).toBe(0);
    expect(saidWhileWaiting).toBe(true);
    expect(cli.output).toMatch(/7 of 7 block\(s\) embedded/);
  }, 60_000);
});
