import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startHttpServer } from '../../../core/http/serve.js';
import { REPO_ROOT, caught } from '../../helpers/harness.js';
import { rawRequest } from '../../helpers/http-client.js';
import { processesRunning } from '../../helpers/processes.js';
import { reader, useBlocks, type Act } from '../blocks/blocks-harness.js';

const { boot } = useBlocks();
const FIXTURES = join(REPO_ROOT, 'test', 'fixtures', 'sql-hostile');

interface Created { id: string }
interface Answer { columns: string[]; rows: unknown[][]; rowCount: number; truncated: boolean; cellsTruncated: boolean; markdown: string; blocks: { id: string; link: string }[] }

async function notes(act: Act) {
  const notebook = await act<Created>('notebook_create', { name: 'N' });
  const doc = await act<Created>('document_create', { notebook: notebook.id, title: 'D', markdown: 'alpha #x#\n\nbeta | pipe\n\ngamma' });
  return { notebook: notebook.id, doc: doc.id };
}

/** Every file of the workspace, hashed; the index's -shm file is shared memory that every reader touches. */
async function workspaceState(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    out[path.slice(root.length)] = entry.name.endsWith('-shm') ? 'present' : createHash('sha256').update(await readFile(path)).digest('hex');
  }
  return out;
}

/**
 * The workspace's state once the kernel's own background writes of the earlier actions are done (the
 * audit head written up to 100 ms after the answers, the document write journal checkpointed within a
 * second): the same twice, 1.2 s apart, with no file appearing or going while it is read.
 */
async function settledState(root: string): Promise<Record<string, string>> {
  const read = () => workspaceState(root).catch((error: NodeJS.ErrnoException) => { if (error.code === 'ENOENT') return undefined; throw error; });
  for (let attempt = 0; attempt < 10; attempt++) {
    const first = await read();
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    const second = await read();
    if (first && second && JSON.stringify(first) === JSON.stringify(second)) return second;
  }
  throw new Error('the workspace kept changing with no action running');
}

describe('the SQL tool refuses what is not one read-only SELECT', () => {
  it('refuses every statement of the hostile corpus with its reason, and the index stays byte-identical', async () => {
    const { kernel, act } = await boot();
    await notes(act);
    await act('sql_query', { sql: 'SELECT 1' });
    const files = (await readdir(FIXTURES)).filter((name) => name.endsWith('.json')).sort();
    expect(files.length).toBeGreaterThanOrEqual(40);
    const before = await settledState(kernel.workspace.root);
    for (const file of files) {
      const fixture = JSON.parse(await readFile(join(FIXTURES, file), 'utf8')) as { sql: string; expect: { code: string; reason: string } };
      const error = await caught(act('sql_query', { sql: fixture.sql }));
      expect([file, error.code, error.details?.reason], JSON.stringify(error.details)).toEqual([file, fixture.expect.code, fixture.expect.reason]);
    }
    expect(await workspaceState(kernel.workspace.root)).toEqual(before);
    for (const path of ['/tmp/quire-sql-attack.db', '/tmp/quire-sql-vacuum.db', '/tmp/quire-sql-writefile']) expect([path, existsSync(path)]).toEqual([path, false]);
  });
});

describe('the SQL tool answers', () => {
  it('returns columns, rows, a Markdown table and links to the blocks that exist', async () => {
    const { act } = await boot();
    const { doc } = await notes(act);
    const answer = await act<Answer>('sql_query', { sql: `SELECT id, type, content FROM blocks WHERE root_id = '${doc}' ORDER BY parent_id IS NOT NULL, sort` });
    expect(answer.columns).toEqual(['id', 'type', 'content']);
    expect(answer.rows.map((row) => row[1])).toEqual(['document', 'paragraph', 'paragraph', 'paragraph']);
    expect(answer.blocks.map((block) => block.id).sort()).toEqual(answer.rows.map((row) => row[0]).sort());
    expect(answer.markdown).toContain('| id | type | content |');
    expect(answer.markdown).toContain('beta \\| pipe');
    const missing = await act<Answer>('sql_query', { sql: "SELECT '20200101000000-nothere' AS id" });
    expect(missing.blocks).toEqual([]);
  });

  it('caps rows (default 100, at most 1,000) and flags the cut, also for an endless series', async () => {
    const { act } = await boot();
    const series = 'WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT x FROM n';
    const capped = await act<Answer>('sql_query', { sql: series });
    expect([capped.rowCount, capped.truncated]).toEqual([100, true]);
    expect((await act<Answer>('sql_query', { sql: series, limit: 1000 })).rowCount).toBe(1000);
    expect((await caught(act('sql_query', { sql: series, limit: 1001 }))).code).toBe('INVALID_INPUT');
    const small = await act<Answer>('sql_query', { sql: 'SELECT 1 AS one' });
    expect([small.rowCount, small.truncated]).toEqual([1, false]);
  });

  it("finds open tasks by their list items' checked column, across a tick and a rebuild", async () => {
    const { kernel, act } = await boot();
    const notebook = await act<Created>('notebook_create', { name: 'Tasks' });
    const doc = await act<Created>('document_create', { notebook: notebook.id, title: 'Today', markdown: '- [ ] buy milk\n- [x] call 母\n\n1. [ ] ordered task\n\n- plain item' });
    const open = 'SELECT group_concat(c.content, \' \') AS text FROM blocks i JOIN blocks c ON c.parent_id = i.id WHERE i.checked = 0 GROUP BY i.id ORDER BY min(i.rowid)';
    expect((await act<Answer>('sql_query', { sql: open })).rows).toEqual([['buy milk'], ['ordered task']]);
    const items = await act<Answer>('sql_query', { sql: `SELECT checked FROM blocks WHERE root_id = '${doc.id}' AND type = 'listItem' ORDER BY rowid` });
    expect(items.rows).toEqual([[0], [1], [0], [null]]);
    // Ticked in the file (as an editor would): the index follows.
    const file = join(kernel.workspace.root, 'data', notebook.id, `${doc.id}.json`);
    const text = await readFile(file, 'utf8');
    expect(text).toMatch(/"checked":\s*false/);
    await writeFile(file, text.replace(/"checked":(\s*)false/, '"checked":$1true'));
    await act('index_rebuild', {});
    expect((await act<Answer>('sql_query', { sql: open })).rows).toEqual([['ordered task']]);
  });

  it('answers integers past 2^53 exactly, as their digits (they were rounded silently)', async () => {
    const { act } = await boot();
    const answer = await act<Answer>('sql_query', { sql: 'SELECT 9007199254740993 AS big, 9223372036854775807 AS most, -9007199254740993 AS low, 42 AS small, 1.5 AS real' });
    expect(answer.rows).toEqual([['9007199254740993', '9223372036854775807', '-9007199254740993', 42, 1.5]]);
  });

  it('cuts long cells and large results', async () => {
    const { act } = await boot();
    const long = await act<Answer>('sql_query', { sql: "SELECT printf('%.50000c', 'x') AS big" });
    expect(long.cellsTruncated).toBe(true);
    expect(String(long.rows[0]![0]).length).toBeLessThan(2100);
    const wide = await act<Answer>('sql_query', { sql: "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT printf('%.1900c', 'y') FROM n", limit: 1000 });
    expect(wide.truncated).toBe(true);
    expect(wide.rowCount).toBeLessThan(200);
  });

  it('stops a runaway statement at its time limit and answers the next one at once', async () => {
    const { act } = await boot();
    const runaway = 'WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT count(*) FROM n';
    const error = await caught(act('sql_query', { sql: runaway, timeoutMs: 300 }));
    expect(error.code).toBe('ACTION_TIMEOUT');
    expect((await act<Answer>('sql_query', { sql: 'SELECT 2 AS two' })).rows).toEqual([[2]]);
  });

  it('explains the tables and columns of the index', async () => {
    const { act } = await boot();
    const { tables } = await act<{ tables: { name: string; columns: { name: string; description: string }[] }[] }>('sql_schema', {});
    expect(tables.map((table) => table.name)).toEqual(['notebooks', 'documents', 'blocks', 'attributes', 'refs', 'tags', 'blocks_fts']);
    const blocks = tables.find((table) => table.name === 'blocks')!;
    expect(blocks.columns.map((column) => column.name)).toContain('updated_by');
    expect(blocks.columns.every((column) => column.description !== '')).toBe(true);
  });

  it('is for administrators and the agent only: a reader gets 403 over HTTP', async () => {
    const READER = 'qk_reader-sql';
    const { kernel, act } = await boot({ config: { auth: { tokens: [{ name: 'viewer', role: 'reader', sha256: createHash('sha256').update(READER).digest('hex') }] } } });
    expect((await caught(act('sql_query', { sql: 'SELECT 1' }, reader))).code).toBe('FORBIDDEN');
    expect((await caught(act('sql_schema', {}, reader))).code).toBe('FORBIDDEN');
    const server = await startHttpServer(kernel, { host: '127.0.0.1', port: 0 });
    try {
      const response = await rawRequest(`${server.url}/api/actions/sql/sql/query`, {
        method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${READER}` }, body: JSON.stringify({ sql: 'SELECT 1' }),
      });
      expect([response.status, response.json().error?.code]).toEqual([403, 'FORBIDDEN']);
    } finally {
      await server.close();
    }
  });
});

/** How many processes run the SQL tool's child script on this index file. */
const sqlProcesses = async (indexFile: string): Promise<number> => (await processesRunning('sql-child.cjs', indexFile)).length;

describe('the SQL process', () => {
  it('is started a while after the kernel (warmAfterMs), or by a statement that comes first, and ends with the kernel', async () => {
    const late = await boot({ config: { plugins: { sql: { config: { warmAfterMs: 600_000 } } } } });
    const lateIndex = join(late.kernel.workspace.root, 'index', 'quire.db');
    await notes(late.act);
    expect(await sqlProcesses(lateIndex)).toBe(0);
    expect((await late.act<Answer>('sql_query', { sql: "SELECT content FROM blocks WHERE content = 'gamma'" })).rows).toEqual([['gamma']]);
    expect(await sqlProcesses(lateIndex)).toBe(1);
    await late.kernel.close();
    expect(await sqlProcesses(lateIndex)).toBe(0);

    const soon = await boot({ config: { plugins: { sql: { config: { warmAfterMs: 0 } } } } });
    const soonIndex = join(soon.kernel.workspace.root, 'index', 'quire.db');
    for (let i = 0; i < 200 && await sqlProcesses(soonIndex) === 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await sqlProcesses(soonIndex)).toBe(1);
  });
});
