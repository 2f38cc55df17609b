import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpServer, type RunningServer } from '../../../core/http/serve.js';
import { caught } from '../../helpers/harness.js';
import { rawRequest } from '../../helpers/http-client.js';
import { useBlocks, type Act } from './blocks-harness.js';

const { boot, tempDir } = useBlocks();
const ADMIN = 'qk_depth-admin-token';
const sha = (token: string): string => createHash('sha256').update(token).digest('hex');
/** The document file reader's limit: blocks below the document, the document itself at depth 0. */
const LIMIT = 64;

interface Created { id: string }
interface TreeBlock { id: string; type: string; children?: TreeBlock[] }
interface Tree { document: TreeBlock }

/** `count` block quotes one inside the other around a paragraph: the paragraph is at depth count + 1. */
const quotes = (count: number, text = 'x'): string => `${'> '.repeat(count)}${text}`;
/** A list nested `count` deep by indentation: its innermost paragraph is at depth 2 × count + 1. */
const list = (count: number): string => Array.from({ length: count }, (_, i) => `${'  '.repeat(i)}- item ${i}`).join('\n');

async function snapshotData(dataDir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const entry of await readdir(dataDir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) out.set(join(entry.parentPath, entry.name), await readFile(join(entry.parentPath, entry.name), 'utf8'));
  }
  return out;
}

/** The innermost block of a chain of single children. */
function innermost(block: TreeBlock, depth = 0): { block: TreeBlock; depth: number } {
  const child = block.children?.[0];
  return child ? innermost(child, depth + 1) : { block, depth };
}

async function setup(act: Act) {
  const notebook = await act<Created>('notebook_create', { name: 'N' });
  const doc = await act<Created>('document_create', { notebook: notebook.id, title: 'D', markdown: 'first\n' });
  const tree = await act<Tree>('document_get', { id: doc.id });
  return { notebook: notebook.id, doc: doc.id, first: tree.document.children![0]!.id };
}

describe('how deep blocks may nest', () => {
  const servers: RunningServer[] = [];
  afterEach(async () => { for (const server of servers.splice(0)) await server.close(); });

  it('refuses Markdown nested deeper than the files can be read back with 400 INVALID_INPUT naming the field and the depth', async () => {
    const { kernel, act } = await boot({ config: { auth: { tokens: [{ name: 'admin', role: 'admin', sha256: sha(ADMIN) }] } } });
    const server = await startHttpServer(kernel, { host: '127.0.0.1', port: 0 });
    servers.push(server);
    const { notebook } = await setup(act);
    const before = await snapshotData(kernel.workspace.dataDir);
    const response = await rawRequest(`${server.url}/api/actions/blocks/document/create`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` },
      body: JSON.stringify({ notebook, title: 'Deep', markdown: quotes(LIMIT) }),
    });
    expect(response.status).toBe(400);
    const error = response.json().error!;
    expect(error.code).toBe('INVALID_INPUT');
    expect(error.details).toMatchObject({ field: 'markdown', depth: LIMIT + 1, limit: LIMIT });
    expect(await snapshotData(kernel.workspace.dataDir)).toEqual(before);
  });

  it('refuses 64 nested quotes, a list nested 40 deep and 3,000 nested quotes or list markers in every write that takes Markdown, and writes nothing', async () => {
    const { kernel, act } = await boot();
    const { notebook, doc, first } = await setup(act);
    const before = await snapshotData(kernel.workspace.dataDir);
    for (const markdown of [quotes(LIMIT), list(40), quotes(3_000), `${'- '.repeat(3_000)}x`, `${'> - 1. '.repeat(1_000)}x`]) {
      for (const [target, input] of [
        ['document_create', { notebook, title: 'Deep', markdown }],
        ['block_append', { parentId: doc, markdown }],
        ['block_insert', { previousId: first, markdown }],
        ['block_update', { id: first, markdown }],
        ['dailynote_append', { notebook, date: '2024-05-01', markdown }],
      ] as const) {
        const error = await caught(act(target, input));
        expect([target, markdown.slice(0, 12), error.code, error.details?.field]).toEqual([target, markdown.slice(0, 12), 'INVALID_INPUT', 'markdown']);
        expect(error.details?.depth).toBeGreaterThan(LIMIT);
      }
    }
    expect(await snapshotData(kernel.workspace.dataDir)).toEqual(before);
  });

  it('refuses to put blocks where the document would nest too deep: below a deep block, in place of one, and by a move', async () => {
    const { kernel, act } = await boot();
    const { notebook } = await setup(act);
    const deep = await act<Created>('document_create', { notebook, title: 'Deep', markdown: `${quotes(60)}\n\n${quotes(10, 'y')}\n` });
    const tree = await act<Tree>('document_get', { id: deep.id });
    const chain = innermost(tree.document.children![0]!, 1);
    expect(chain.depth).toBe(61);
    const lastQuote = (await act<{ parentId: string }>('block_get', { id: chain.block.id })).parentId;
    const before = await snapshotData(kernel.workspace.dataDir);
    const append = await caught(act('block_append', { parentId: lastQuote, markdown: quotes(4) }));
    expect([append.code, append.details?.field, append.details?.depth]).toEqual(['INVALID_INPUT', 'markdown', 65]);
    const update = await caught(act('block_update', { id: chain.block.id, markdown: quotes(4) }));
    expect([update.code, update.details?.field, update.details?.depth]).toEqual(['INVALID_INPUT', 'markdown', 65]);
    const move = await caught(act('block_move', { id: tree.document.children![1]!.id, parentId: lastQuote }));
    expect([move.code, move.details?.field, move.details?.depth]).toEqual(['INVALID_INPUT', 'parentId', 71]);
    expect(await snapshotData(kernel.workspace.dataDir)).toEqual(before);
    // Up to the limit is fine.
    await act('block_append', { parentId: lastQuote, markdown: quotes(3) });
  });

  it('reads back the deepest document it accepts after a restart and an index rebuild', async () => {
    const workspace = join(await tempDir(), 'workspace');
    const first = await boot({ workspace });
    const { notebook } = await setup(first.act);
    const deepest = `${quotes(LIMIT - 1)}\n\n${list((LIMIT - 2) / 2)}\n`;
    const doc = await first.act<Created>('document_create', { notebook, title: 'Deepest', markdown: deepest });
    // As an HTTP client would see it (without the store's in-memory marks).
    const read = async (act: Act): Promise<Tree> => JSON.parse(JSON.stringify(await act<Tree>('document_get', { id: doc.id }))) as Tree;
    const written = await read(first.act);
    expect(innermost(written.document.children![0]!, 1).depth).toBe(LIMIT);
    await first.kernel.close();
    const second = await boot({ workspace });
    expect((await second.act<{ problems: unknown[] }>('index_problems', {})).problems).toEqual([]);
    expect(await read(second.act)).toEqual(written);
    await second.act('index_rebuild', {});
    expect((await second.act<{ problems: unknown[] }>('index_problems', {})).problems).toEqual([]);
    expect(await read(second.act)).toEqual(written);
  });

  it('imports a file nested too deeply as an empty document, reported as skipped, and every imported file reads back', async () => {
    const workspace = join(await tempDir(), 'workspace');
    const source = join(await tempDir(), 'source');
    await mkdir(source);
    await writeFile(join(source, 'deep.md'), `${quotes(LIMIT)}\n`);
    await writeFile(join(source, 'deepest.md'), `${quotes(LIMIT - 1)}\n`);
    const first = await boot({ workspace });
    const { notebook } = await setup(first.act);
    const result = await first.act<{ documents: number; skipped: { path: string }[] }>('import_markdown', { notebook, path: source });
    expect(result.documents).toBe(2);
    expect(result.skipped.map((skipped) => skipped.path)).toEqual([join(source, 'deep.md')]);
    await first.kernel.close();
    const second = await boot({ workspace });
    expect((await second.act<{ problems: unknown[] }>('index_problems', {})).problems).toEqual([]);
  });
});
