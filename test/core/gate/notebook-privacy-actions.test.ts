import { readdir, readFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Kernel } from '../../../core/kernel.js';
import type { Principal } from '../../../core/plugin-api.js';
import { toolSpecs } from '../../../core/turn/turn-loop.js';
import { notebooksInResult } from '../../../core/pipeline/prepared-call.js';
import { admin, agent } from '../../plugins/blocks/blocks-harness.js';
import { embedded, useSemantic } from '../../plugins/search-semantic/semantic-harness.js';

/**
 * Issue 17, point 2: every action of every native plugin (enumerated from the registry, so a new
 * action without a case here fails the test) is called by the agent against a notebook closed to it
 * (`agent: none`) and one it may only read (`agent: read`). Closed: nothing of it comes back (its
 * marker word, name, ids), writes naming it are refused, and its files are byte-identical afterwards.
 * Read-only: every write into it is refused, reads work, its files are unchanged.
 */

const MARKER = 'zebraquartz';
/** Only in the notebook marked egress: local-only (the agent may read and write it). */
const LOCAL_MARKER = 'quokkaplinth';
const { boot, tempDir } = useSemantic();

interface Place { notebook: string; name: string; word: string; doc: string; block: string; block2: string; version: string; child: string }
interface World { kernel: Kernel; closed: Place; readOnly: Place; open: Place; local: Place; snapshot: string; importDir: string; exportDir: string }
/** An agent call: the input, and whether it would change the notebook it names (as opposed to reading it, or changing nothing of it). */
interface Case { input: Record<string, unknown>; writes?: boolean }

function cases(at: Place, w: World): Record<string, Case[]> {
  const read = (input: Record<string, unknown>): Case => ({ input });
  const write = (input: Record<string, unknown>): Case => ({ input, writes: true });
  return {
    notebook_list: [read({})],
    notebook_create: [read({ name: 'Made by the agent' })],
    notebook_rename: [write({ id: at.notebook, name: 'Renamed' })],
    notebook_set_access: [write({ id: at.notebook, access: 'published' })],
    notebook_set_privacy: [write({ id: at.notebook, agent: 'write' })],
    notebook_remove: [write({ id: at.notebook })],
    document_create: [write({ notebook: at.notebook, title: 'New', markdown: 'x' }), write({ notebook: w.open.notebook, parentId: at.doc, title: 'Under', markdown: 'x' })],
    document_get: [read({ id: at.doc })],
    document_get_markdown: [read({ id: at.doc })],
    document_list: [read({ notebook: at.notebook })],
    document_info: [read({ id: at.doc })],
    document_rename: [write({ id: at.doc, title: 'Renamed' })],
    document_move: [write({ id: at.child, notebook: w.open.notebook }), write({ id: w.open.child, notebook: at.notebook })],
    document_duplicate: [write({ id: at.doc })],
    document_remove: [write({ id: at.child })],
    block_get: [read({ id: at.block })],
    block_get_children: [read({ id: at.doc })],
    block_batch_get: [read({ ids: [at.block, w.open.block] })],
    block_insert: [write({ markdown: 'x', previousId: at.block }), write({ markdown: 'x', parentId: at.doc })],
    block_append: [write({ parentId: at.doc, markdown: 'x' })],
    block_prepend: [write({ parentId: at.doc, markdown: 'x' })],
    block_update: [write({ id: at.block, markdown: 'changed' })],
    block_delete: [write({ id: at.block2 })],
    block_move: [write({ id: at.block2, previousId: at.block }), write({ id: w.open.block2, previousId: at.block }), write({ id: at.block2, parentId: w.open.doc })],
    attr_get: [read({ id: at.block })],
    attr_set: [write({ id: at.block, attrs: { 'custom-x': 'y' } })],
    ref_backlinks: [read({ id: at.block }), read({ id: w.open.block })],
    ref_forward: [read({ id: at.block }), read({ id: w.open.block })],
    tag_list: [read({})],
    tag_blocks: [read({ tag: at.word })],
    outline_get: [read({ id: at.doc })],
    dailynote_get: [read({ notebook: at.notebook })],
    dailynote_append: [write({ notebook: at.notebook, markdown: 'x' })],
    dailynote_prepend: [write({ notebook: at.notebook, markdown: 'x' })],
    import_markdown: [write({ notebook: at.notebook, path: w.importDir }), write({ notebook: w.open.notebook, parentId: at.doc, path: w.importDir })],
    export_markdown: [read({ id: at.doc, folder: join(w.exportDir, `${at.name}-doc`) }), read({ id: at.notebook, folder: join(w.exportDir, `${at.name}-nb`) })],
    index_rebuild: [read({})],
    index_problems: [read({})],
    history_list: [read({ id: at.doc })],
    history_search: [read({ query: at.word }), read({})],
    history_get: [read({ id: at.doc, version: at.version })],
    history_rollback: [write({ id: at.doc, version: at.version })],
    history_clear: [write({}), write({ id: at.doc })],
    rerank_rerank: [read({ query: at.word, ids: [at.block, w.open.block] })],
    search_fulltext: [read({ query: at.word }), read({ query: at.word, notebooks: [at.notebook] })],
    search_hybrid: [read({ query: at.word }), read({ query: at.word, path: at.doc })],
    search_semantic: [read({ query: at.word }), read({ query: at.word, notebooks: [at.notebook] })],
    embeddings_status: [read({})],
    embeddings_reindex: [read({})],
    embeddings_retry_failed: [read({})],
    embeddings_index: [read({})],
    skill_list: [read({})],
    skill_load: [read({ name: 'absent' })],
    skill_save: [read({ name: 'agent-skill', content: '---\nname: agent-skill\ndescription: A skill.\n---\nBody.\n' })],
    skill_rename: [read({ name: 'agent-skill', newName: 'agent-skill-2' })],
    skill_remove: [read({ name: 'agent-skill-2' })],
    skill_install: [read({ path: join(w.importDir, 'no-such-skill'), dryRun: true })],
    skill_install_url: [read({ url: 'http://127.0.0.1:9/skill.zip', dryRun: true })],
    skill_versions: [read({})],
    skill_restore_version: [read({ name: 'absent', version: 'v1' })],
    snapshot_create: [read({ memo: 'by the agent' })],
    snapshot_list: [read({})],
    snapshot_get: [read({ id: w.snapshot })],
    snapshot_diff: [read({ from: w.snapshot })],
    snapshot_rollback: [write({ id: w.snapshot })],
    snapshot_tag: [read({ id: w.snapshot, tag: 'kept' })],
    snapshot_untag: [read({ id: w.snapshot, tag: 'kept' })],
    // For a person only: the agent is answered as if it did not exist, and nothing is deleted.
    snapshot_delete: [read({ ids: [w.snapshot] })],
    snapshot_purge: [read({})],
    snapshot_verify: [read({})],
    sql_query: [read({ sql: 'SELECT content FROM blocks' })],
    sql_schema: [read({})],
    system_info: [read({})],
    system_current_time: [read({})],
    todo_write: [read({ todos: [{ content: 'a', status: 'pending' }] })],
  };
}

interface Seen { status: string; code?: string; text: string; notebooks?: string[] | 'all' }

/** The answer without what the agent itself said (an error naming the id it asked for is no leak). */
function withoutEcho(text: string, input: Record<string, unknown>): string {
  const said = JSON.stringify(input).match(/"[^"]*"/g)?.map((quoted) => quoted.slice(1, -1)).filter((value) => value.length >= 6) ?? [];
  return said.sort((a, b) => b.length - a.length).reduce((out, value) => out.split(value).join(''), text);
}

async function call(kernel: Kernel, target: string, input: Record<string, unknown>, principal: Principal): Promise<Seen> {
  try {
    const outcome = await kernel.pipeline.call({ target, input: structuredClone(input), principal, sessionMode: 'auto' });
    const value = outcome.status === 'ok' ? outcome.value : outcome.status === 'job' ? await outcome.done : outcome;
    return { status: outcome.status, text: JSON.stringify(value), notebooks: notebooksInResult(outcome.call) };
  } catch (error) {
    const e = error as { code?: string; message?: string; details?: unknown };
    return { status: 'error', code: e.code ?? 'THROWN', text: `${e.message ?? String(error)} ${JSON.stringify(e.details ?? {})}` };
  }
}

async function filesOf(folder: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await readdir(folder, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) {
      const path = join(entry.parentPath, entry.name);
      out[path.slice(folder.length)] = await readFile(path, 'utf8');
    }
  }
  return out;
}

async function world(): Promise<World> {
  const root = join(await tempDir(), 'workspace');
  const { kernel } = await boot(undefined, { workspace: root, embedder: 'local', semantic: { batchSize: 16 } });
  const as = async <T,>(target: string, input: Record<string, unknown>): Promise<T> => {
    const outcome = await kernel.pipeline.call({ target, input, principal: admin });
    if (outcome.status !== 'ok') throw new Error(`${target}: ${outcome.status}`);
    return outcome.value as T;
  };
  const place = async (name: string, word: string): Promise<Place> => {
    const notebook = (await as<{ id: string }>('notebook_create', { name })).id;
    const doc = (await as<{ id: string }>('document_create', { notebook, title: `${name} title ${word}`, markdown: `${word} first paragraph #${word}\n\n${word} second paragraph\n` })).id;
    const child = (await as<{ id: string }>('document_create', { notebook, parentId: doc, title: `${name} child`, markdown: `${word} in the child\n` })).id;
    const tree = await as<{ document: { children: { id: string }[] } }>('document_get', { id: doc });
    const [block, block2] = tree.document.children.map((c) => c.id) as [string, string];
    return { notebook, name, word, doc, block, block2, child, version: '' };
  };
  const closed = await place('ClosedBook', MARKER);
  const readOnly = await place('ReadBook', 'readword');
  const open = await place('OpenBook', 'openword');
  const local = await place('LocalBook', LOCAL_MARKER);
  // A reference from the open notebook into the closed one (its id is the open note's text): following
  // it, and the backlinks of the closed block, must tell nothing of the closed notebook.
  await as('block_update', { id: open.block, markdown: `openword see ((${closed.block} "over there"))` });
  const snapshot = (await as<{ id: string }>('snapshot_create', { memo: 'before the last edits' })).id;
  for (const at of [closed, readOnly, local]) {
    await as('block_update', { id: at.block2, markdown: `${at === closed ? MARKER : at === local ? LOCAL_MARKER : 'readword'} edited after the snapshot` });
    const versions = await as<{ versions: { version: string }[] }>('history_list', { id: at.doc });
    at.version = versions.versions[0]!.version;
  }
  await as('notebook_set_privacy', { id: closed.notebook, agent: 'none' });
  await as('notebook_set_privacy', { id: readOnly.notebook, agent: 'read' });
  await as('notebook_set_privacy', { id: local.notebook, egress: 'local-only' });
  await embedded((target, input) => as(target, input));
  const importDir = join(root, '..', 'to-import');
  await mkdir(importDir, { recursive: true });
  await writeFile(join(importDir, 'note.md'), '# Imported\n\nimported text\n');
  return { kernel, closed, readOnly, open, local, snapshot, importDir, exportDir: join(root, '..', 'exports') };
}

describe('notebook privacy: every native action, called by the agent', () => {
  it('has a case for every native action, and the agent is never offered notebook_set_privacy', async () => {
    const w = await world();
    const native = w.kernel.registry.list().filter((entry) => entry.source === 'native').map((entry) => entry.wireName).sort();
    expect(Object.keys(cases(w.closed, w)).sort()).toEqual(native);
    expect(toolSpecs(w.kernel.registry, []).map((tool) => tool.name)).not.toContain('notebook_set_privacy');
    const refused = await call(w.kernel, 'notebook_set_privacy', { id: w.closed.notebook, agent: 'write' }, agent());
    expect(refused.code).toBe('ACTION_NOT_FOUND');
    expect(toolSpecs(w.kernel.registry, []).map((tool) => tool.name)).not.toContain('snapshot_delete');
    // Publishing shows a notebook to every reader token: a person's decision, like its privacy.
    expect(toolSpecs(w.kernel.registry, []).map((tool) => tool.name)).not.toContain('notebook_set_access');
    expect((await call(w.kernel, 'notebook_set_access', { id: w.open.notebook, access: 'published' }, agent())).code).toBe('ACTION_NOT_FOUND');
    expect((await call(w.kernel, 'notebook_create', { name: 'Shown to all', access: 'published' }, agent())).code).toBe('ACTION_DENIED');
    expect((await call(w.kernel, 'snapshot_delete', { ids: [w.snapshot] }, agent())).code).toBe('ACTION_NOT_FOUND');
  }, 120_000);

  it('agent: none — nothing of the notebook comes back from any action, writes naming it are refused, its files do not change', async () => {
    const w = await world();
    const folder = join(w.kernel.workspace.dataDir, w.closed.notebook);
    const before = await filesOf(folder);
    // Not the closed block's id itself: the open notebook's text names it (see world()).
    const secrets = [MARKER, w.closed.notebook, w.closed.doc, w.closed.block2, w.closed.child, 'ClosedBook'];
    const leaks: string[] = [];
    const allowedWrites: string[] = [];
    for (const [target, list] of Object.entries(cases(w.closed, w))) {
      for (const { input, writes } of list) {
        const seen = await call(w.kernel, target, input, agent());
        const answer = withoutEcho(seen.text, input);
        for (const secret of secrets) if (answer.includes(secret)) leaks.push(`${target} ${JSON.stringify(input)} → ${secret}: ${seen.text.slice(0, 200)}`);
        if (writes && seen.status === 'ok') allowedWrites.push(`${target} ${JSON.stringify(input)}`);
      }
    }
    expect(leaks).toEqual([]);
    expect(allowedWrites).toEqual([]);
    expect(await filesOf(folder)).toEqual(before);
    // The detector works: the person, through the same cases, does see the marker.
    const person = await call(w.kernel, 'search_fulltext', { query: MARKER }, admin);
    expect(person.text).toContain(MARKER);
  }, 240_000);

  it('agent: read — every write into the notebook is refused with a clear error, reads work, its files do not change', async () => {
    const w = await world();
    const folder = join(w.kernel.workspace.dataDir, w.readOnly.notebook);
    const before = await filesOf(folder);
    const allowedWrites: string[] = [];
    const unclear: string[] = [];
    const failedReads: string[] = [];
    for (const [target, list] of Object.entries(cases(w.readOnly, w))) {
      for (const { input, writes } of list) {
        const seen = await call(w.kernel, target, input, agent());
        if (writes) {
          if (seen.status === 'ok') allowedWrites.push(`${target} ${JSON.stringify(input)}`);
          else if (!['ACTION_DENIED', 'ACTION_NOT_FOUND', 'FORBIDDEN'].includes(seen.code ?? '')) unclear.push(`${target} ${JSON.stringify(input)} → ${seen.code}: ${seen.text.slice(0, 200)}`);
        }
      }
    }
    for (const [target, input] of [['document_get_markdown', { id: w.readOnly.doc }], ['search_fulltext', { query: 'readword' }], ['block_get', { id: w.readOnly.block }]] as const) {
      const seen = await call(w.kernel, target, input, agent());
      if (seen.status !== 'ok' || !seen.text.includes('readword')) failedReads.push(`${target}: ${seen.text.slice(0, 200)}`);
    }
    expect(allowedWrites).toEqual([]);
    expect(unclear).toEqual([]);
    expect(failedReads).toEqual([]);
    expect(await filesOf(folder)).toEqual(before);
    // An export only reads the notebook (its writes go to a folder elsewhere).
    const exported = await call(w.kernel, 'export_markdown', { id: w.readOnly.doc, folder: join(w.exportDir, 'read-only-export') }, agent());
    expect(exported.status).toBe('ok');
    const denied = await call(w.kernel, 'block_update', { id: w.readOnly.block, markdown: 'x' }, agent());
    expect(denied).toMatchObject({ code: 'ACTION_DENIED' });
    expect(denied.text).toContain('agent may only read');
  }, 240_000);

  it('local-only: no agent result holding the notebook\'s text fails to say so; the observed table of every action (QUIRE_PRIVACY_TABLE=<file> writes it)', async () => {
    const w = await world();
    const reader: Principal = { kind: 'person', name: 'rita', role: 'reader' };
    const rows: string[] = ['| action | reader (private notebook) | agent, `agent: none` | agent, `agent: read` | local-only notebook: the agent\'s result to a cloud model |', '|---|---|---|---|---|'];
    const unsaid: string[] = [];
    const readerLeaks: string[] = [];
    const show = (seen: Seen) => (seen.status === 'ok' || seen.status === 'job' ? 'ok' : seen.code ?? seen.status);
    // What removes or moves things goes last, so that every other action still finds what it names.
    const last = (name: string) => (name === 'notebook_remove' ? 2 : /remove|delete|move|rollback|clear|purge/.test(name) ? 1 : 0);
    const targets = Object.keys(cases(w.open, w)).sort((a, b) => last(a) - last(b));
    for (const target of targets) {
      // Each column on a fresh copy of the case against its own notebook; writes run in auto mode.
      // The closed notebook is private, and nothing (not even the agent's writes) can publish it meanwhile.
      const readerInput = cases(w.closed, w)[target]![0]!.input;
      const asReader = await call(w.kernel, target, readerInput, reader);
      // A reader learns nothing of a private notebook from any action (the reader scope, core/gate/read-scope.ts).
      if (withoutEcho(asReader.text, readerInput).includes(MARKER) || withoutEcho(asReader.text, readerInput).includes('ClosedBook')) readerLeaks.push(`${target}: ${asReader.text.slice(0, 200)}`);
      const none = await call(w.kernel, target, cases(w.closed, w)[target]![0]!.input, agent());
      const readOnly = await call(w.kernel, target, cases(w.readOnly, w)[target]![0]!.input, agent());
      const local = await call(w.kernel, target, cases(w.local, w)[target]![0]!.input, agent());
      // Its own words (an error naming the query, a tag echoed back) are no text of the notebook.
      const holds = withoutEcho(local.text, cases(w.local, w)[target]![0]!.input).includes(LOCAL_MARKER);
      const reported = local.notebooks === 'all' || (local.notebooks ?? []).includes(w.local.notebook);
      if (holds && !reported) unsaid.push(`${target}: its result holds the local-only text but reports ${JSON.stringify(local.notebooks)}`);
      const egress = local.status !== 'ok' && local.status !== 'job' ? `${show(local)} (nothing returned)` : reported ? (local.notebooks === 'all' ? 'withheld (cannot say: every notebook)' : 'withheld (reports the notebook)') : 'sent (holds none of it)';
      rows.push(`| \`${target}\` | ${show(asReader)} | ${show(none)} | ${show(readOnly)} | ${egress} |`);
    }
    expect(unsaid).toEqual([]);
    expect(readerLeaks).toEqual([]);
    if (process.env.QUIRE_PRIVACY_TABLE) await writeFile(process.env.QUIRE_PRIVACY_TABLE, `${rows.join('\n')}\n`);
  }, 240_000);
});
