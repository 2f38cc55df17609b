import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpServer, type RunningServer } from '../../../core/http/serve.js';
import { newId } from '../../../core/ids.js';
import type { Kernel } from '../../../core/kernel.js';
import { REPO_ROOT } from '../../helpers/harness.js';
import { rawRequest } from '../../helpers/http-client.js';
import { agent, useBlocks, type Act } from './blocks-harness.js';

const { boot } = useBlocks();
const ADMIN = 'qk_private-ids-admin';
const READER = 'qk_private-ids-reader';
const sha = (token: string): string => createHash('sha256').update(token).digest('hex');
const ID_PATTERN = '^\\d{14}-[0-9a-z]{7}$';
/** Words that appear only in the hidden notebook: no answer to a reader or a denied agent may hold them. */
const SECRET_WORDS = ['zanzibarword', 'secrettag'];

interface Schema { type?: string; pattern?: string; items?: Schema; properties?: Record<string, Schema>; required?: string[] }
interface ReadAction { plugin: string; tool: string; action: string; input: Schema }

/** Every action without effects of every native manifest: what a reader may call, read from the manifests themselves. */
function readActions(): ReadAction[] {
  const folder = join(REPO_ROOT, 'manifests');
  const out: ReadAction[] = [];
  for (const file of readdirSync(folder).filter((name) => name.endsWith('.json') && !name.endsWith('.schema.json')).sort()) {
    const manifest = JSON.parse(readFileSync(join(folder, file), 'utf8')) as { id: string; tools?: { name: string; actions: Record<string, { effects: string[]; input: Schema }> }[] };
    for (const tool of manifest.tools ?? []) {
      for (const [action, spec] of Object.entries(tool.actions)) if (spec.effects.length === 0) out.push({ plugin: manifest.id, tool: tool.name, action, input: spec.input });
    }
  }
  return out;
}

/** Input fields that take an id: by the id pattern (alone or as items), or a path of ids. */
function idFields(input: Schema): string[] {
  return Object.entries(input.properties ?? {})
    .filter(([name, schema]) => schema.pattern === ID_PATTERN || schema.items?.pattern === ID_PATTERN || name === 'path')
    .map(([name]) => name);
}

interface World { notebook: string; doc: string; child: string; block: string; version: string; publicNotebook: string; publicDoc: string }

/** A published notebook, and a private one with a document, a child document, blocks, a tag, a reference, history and a broken file. */
async function world(kernel: Kernel, act: Act): Promise<World> {
  const published = await act<{ id: string }>('notebook_create', { name: 'Open', access: 'published' });
  const publicDoc = await act<{ id: string }>('document_create', { notebook: published.id, title: 'Open doc', markdown: '# Heading\n\nopen words #opentag#\n' });
  const hidden = await act<{ id: string }>('notebook_create', { name: 'Hidden zanzibarword' });
  const doc = await act<{ id: string }>('document_create', { notebook: hidden.id, title: 'Hidden doc zanzibarword', markdown: `# Secret heading\n\nzanzibarword #secrettag# ((${publicDoc.id} "open"))\n` });
  const child = await act<{ id: string }>('document_create', { notebook: hidden.id, parentId: doc.id, title: 'Hidden child', markdown: 'zanzibarword below\n' });
  const tree = await act<{ document: { children: { id: string }[] } }>('document_get', { id: doc.id });
  const block = tree.document.children[1]!.id;
  await act('block_update', { id: block, markdown: `zanzibarword changed #secrettag# ((${publicDoc.id} "open"))` });
  const versions = await act<{ versions: { version: string }[] }>('history_list', { id: doc.id });
  await act('snapshot_create', { memo: 'both notebooks' });
  await writeFile(join(kernel.workspace.dataDir, hidden.id, `${newId()}.json`), '{ not json zanzibarword');
  await act('index_rebuild', {});
  return { notebook: hidden.id, doc: doc.id, child: child.id, block, version: versions.versions[0]!.version, publicNotebook: published.id, publicDoc: publicDoc.id };
}

/** Values for the other fields a call needs, chosen from what the caller may see. */
function baseInput(action: ReadAction, w: World, probed: string): Record<string, unknown> {
  const fillers: Record<string, unknown> = {
    query: 'zanzibarword', tag: 'secrettag', prefix: 'secret', version: w.version, sql: 'SELECT id, content FROM blocks', todos: [],
    notebook: w.publicNotebook, id: w.publicDoc, from: w.publicDoc,
  };
  const input: Record<string, unknown> = {};
  for (const name of action.input.required ?? []) if (name !== probed) input[name] = fillers[name] ?? w.publicDoc;
  return input;
}

function withValue(action: ReadAction, field: string, value: string): unknown {
  return action.input.properties?.[field]?.type === 'array' ? [value] : value;
}

/** The answer with the asked value written as <ID>: it may be echoed, nothing else may differ. */
function normalised(answer: unknown, value: string): string {
  return JSON.stringify(answer).split(value).join('<ID>');
}

/**
 * What an answer tells of the hidden notebook: its id, its documents' and blocks' ids, its words. An
 * input field echoed as it was sent (`"query":"…"`) tells nothing the caller did not know.
 */
function leaks(answer: unknown, input: Record<string, unknown>, w: World): string[] {
  let text = JSON.stringify(answer);
  for (const [field, value] of Object.entries(input)) text = text.split(`"${field}":${JSON.stringify(value)}`).join('');
  const asked = new Set(Object.values(input).flat());
  return [w.notebook, w.doc, w.child, w.block, ...SECRET_WORDS].filter((value) => !asked.has(value) && text.includes(value));
}

type Ask = (action: ReadAction, input: Record<string, unknown>) => Promise<unknown>;

/**
 * Calls every action plainly (nothing hidden may show), then puts each hidden id (notebook, document,
 * child document, block) in each id field and compares the answer with that for a random id.
 */
async function walk(actions: ReadAction[], w: World, ask: Ask): Promise<{ differences: unknown[]; leaked: unknown[]; compared: number }> {
  const differences: unknown[] = [];
  const leaked: unknown[] = [];
  let compared = 0;
  const kinds = new Map([[w.notebook, 'notebook'], [w.doc, 'document'], [w.child, 'child document'], [w.block, 'block']]);
  for (const action of actions) {
    const name = `${action.plugin}/${action.tool}/${action.action}`;
    const plainInput = baseInput(action, w, '');
    for (const found of leaks(await ask(action, plainInput), plainInput, w)) leaked.push([name, 'no id', found]);
    for (const field of idFields(action.input)) {
      const random = newId();
      const randomAnswer = normalised(await ask(action, { ...baseInput(action, w, field), [field]: withValue(action, field, random) }), random);
      for (const [hidden, kind] of kinds) {
        const input = { ...baseInput(action, w, field), [field]: withValue(action, field, hidden) };
        const answer = await ask(action, input);
        compared++;
        if (normalised(answer, hidden) !== randomAnswer) differences.push([name, field, kind, normalised(answer, hidden), randomAnswer]);
        for (const found of leaks(answer, input, w)) leaked.push([name, field, found]);
      }
    }
  }
  return { differences, leaked, compared };
}

describe('a reader and a denied agent learn nothing of what they may not see', () => {
  const servers: RunningServer[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close();
  });

  async function setUp() {
    const tokens = [{ name: 'admin', role: 'admin' as const, sha256: sha(ADMIN) }, { name: 'rita', role: 'reader' as const, sha256: sha(READER) }];
    const first = await boot({ config: { auth: { tokens }, plugins: { history: { config: { coalesceSeconds: 0 } } } } });
    const w = await world(first.kernel, first.act);
    const root = first.kernel.workspace.root;
    await first.kernel.close();
    // The same workspace with a deny rule closing the hidden notebook to the agent.
    const { kernel, act } = await boot({ workspace: root, config: { auth: { tokens }, gate: { deny: [{ tool: '*', notebook: w.notebook }] } } });
    const server = await startHttpServer(kernel, { host: '127.0.0.1', port: 0 });
    servers.push(server);
    return { kernel, act, w, url: server.url };
  }

  it('answers a private id and a random id alike for every reader-callable action, over HTTP with a reader token', async () => {
    const { w, url } = await setUp();
    const ask: Ask = async (action, input) => {
      const response = await rawRequest(`${url}/api/actions/${action.plugin}/${action.tool}/${action.action}`, {
        method: 'POST', headers: { authorization: `Bearer ${READER}`, 'content-type': 'application/json' }, body: JSON.stringify(input),
      });
      return { status: response.status, body: response.json() };
    };
    const actions = readActions();
    expect(actions.length).toBeGreaterThanOrEqual(20);
    // What the server offers a reader is what the manifests say: no read action is left out of the walk.
    const listed = (await rawRequest(`${url}/api/plugins`, { headers: { authorization: `Bearer ${READER}` } })).json() as unknown as
      { plugins: { id: string; source: string; tools: { name: string; actions: { name: string; effects: string[] }[] }[] }[] };
    const offered = listed.plugins.filter((plugin) => plugin.source === 'native')
      .flatMap((plugin) => plugin.tools.flatMap((tool) => tool.actions.filter((action) => action.effects.length === 0).map((action) => `${plugin.id}/${tool.name}/${action.name}`)));
    expect(offered.sort()).toEqual(actions.map((action) => `${action.plugin}/${action.tool}/${action.action}`).sort());
    const { differences, leaked, compared } = await walk(actions, w, ask);
    expect({ differences, leaked }).toEqual({ differences: [], leaked: [] });
    expect(compared).toBeGreaterThanOrEqual(60);
  });

  it('answers an id in a denied notebook and a random id alike for every read action the agent calls', async () => {
    const { kernel, w } = await setUp();
    const principal = agent();
    const ask: Ask = async (action, input) => {
      try {
        const outcome = await kernel.pipeline.call({ target: { plugin: action.plugin, tool: action.tool, action: action.action }, input, principal, sessionMode: 'auto' });
        return { status: outcome.status, value: outcome.status === 'ok' ? outcome.value : null };
      } catch (error) {
        const { code, message, details } = error as { code: string; message: string; details: unknown };
        return { error: { code, message, details } };
      }
    };
    const { differences, leaked, compared } = await walk(readActions(), w, ask);
    expect({ differences, leaked }).toEqual({ differences: [], leaked: [] });
    expect(compared).toBeGreaterThanOrEqual(60);
  });
});
