import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateTinyBertModel } from '../../fakes/onnx-model/generate.js';
import { agent } from '../blocks/blocks-harness.js';
import { embedded, semantic, useSemantic, type Created } from './semantic-harness.js';

const { boot, tempDir } = useSemantic();

describe('semantic search with the local ONNX embedder (local-models, a generated tiny model)', () => {
  it('embeds local-only notebooks too, and an agent\'s search runs without asking', async () => {
    const workspace = join(await tempDir(), 'workspace');
    await generateTinyBertModel(join(workspace, 'models', 'test', 'embedder'), { seed: 3 });
    const { act, kernel } = await boot(undefined, {
      workspace, embedder: 'none', semantic: { embedder: 'local-models' },
      config: { plugins: { 'local-models': { config: { embedder: { model: 'test/embedder' } } } } },
    });
    const notebook = await act<Created>('notebook_create', { name: 'Local' });
    await act('document_create', { notebook: notebook.id, title: 'Notes', markdown: 'hello world from the garden\n\n向量搜索的笔记' });
    // Marked local-only: a local embedder (no effects) embeds it all the same.
    const conf = join(kernel.workspace.dataDir, notebook.id, '.notebook.json');
    await writeFile(conf, JSON.stringify({ ...JSON.parse(await readFile(conf, 'utf8')) as object, egress: 'local-only' }));
    await act('index_rebuild', {});
    const status = await embedded(act);
    expect([status.indexed, status.ignored['local-only'], status.model]).toEqual([3, 0, 'local-models/onnx:test/embedder']);
    const outcome = await kernel.pipeline.call({ target: 'search_semantic', input: { query: 'hello world' }, principal: agent() });
    expect(outcome.status).toBe('ok');
    const found = await semantic(act, '向量搜索的笔记');
    expect(found.results[0]!.snippet).toBe('向量搜索的笔记');
  }, 120_000);
});
