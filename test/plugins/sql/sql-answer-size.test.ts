import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpServer, type RunningServer } from '../../../core/http/serve.js';
import { rawRequest, type RawResponse } from '../../helpers/http-client.js';
import { useBlocks, type Act } from '../blocks/blocks-harness.js';

const { boot } = useBlocks();
const ADMIN = 'qk_sql-size-admin';
const sha = (token: string): string => createHash('sha256').update(token).digest('hex');
/** What README.md promises: 256 KB per answer, the whole of it as sent. */
const ANSWER_BYTES = 256_000;

interface Answer { columns: string[]; rows: unknown[][]; rowCount: number; truncated: boolean; markdown: string; blocks: { id: string; link: string }[] }

/** A document of `count` short paragraphs: block ids for the answers' links. */
async function manyBlocks(act: Act, count: number): Promise<void> {
  const notebook = await act<{ id: string }>('notebook_create', { name: 'Rows' });
  const markdown = Array.from({ length: count }, (_, i) => `p${i} |`).join('\n\n');
  await act('document_create', { notebook: notebook.id, title: 'Many', markdown });
}

/** SQL for a value of `repeat` copies of `text` (no data needed). */
const repeated = (text: string, repeat: number): string => `replace(hex(zeroblob(${repeat})), '00', '${text}')`;

describe('the size of an SQL answer', () => {
  const servers: RunningServer[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close();
  });

  async function serve() {
    const booted = await boot({ config: { auth: { tokens: [{ name: 'admin', role: 'admin', sha256: sha(ADMIN) }] } } });
    await manyBlocks(booted.act, 1200);
    const server = await startHttpServer(booted.kernel, { host: '127.0.0.1', port: 0 });
    servers.push(server);
    const query = (sql: string, limit = 1000): Promise<RawResponse> => rawRequest(`${server.url}/api/actions/sql/sql/query`, {
      method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ sql, limit }),
    });
    return { ...booted, query };
  }

  /** The answer's parts agree with each other: a table line and links for exactly the rows kept. */
  function consistent(answer: Answer): void {
    expect(answer.rowCount).toBe(answer.rows.length);
    const tableLines = answer.markdown.split('\n').filter((line) => line.startsWith('| ')).length;
    expect(tableLines).toBe(answer.rows.length + 2);
    const shown = new Set(answer.rows.flatMap((row) => row.filter((cell): cell is string => typeof cell === 'string' && /^\d{14}-[0-9a-z]{7}$/.test(cell))));
    expect(answer.blocks.every((block) => shown.has(block.id))).toBe(true);
  }

  it('keeps the whole answer as sent within 256 KB, saying it was truncated, for wide rows and many short rows', async () => {
    const { query } = await serve();
    const hostile = [
      // Wide rows of multi-byte text: each cell at the 2,000-byte cap, twice per row, with ids to link.
      `SELECT id, root_id, ${repeated('日本', 400)} AS wide, ${repeated('é', 1500)} AS wider FROM blocks`,
      // Many short rows that grow when escaped: JSON writes a control character as six bytes, Markdown a pipe as two.
      `SELECT id, ${repeated(String.fromCharCode(1), 50)} AS ctl, ${repeated('|', 40)} AS pipes FROM blocks`,
      `SELECT id, parent_id, root_id, id AS document_id FROM blocks`,
      `SELECT id, ${repeated('"\\\\', 300)} AS quotes FROM blocks`,
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n LIMIT 1000) SELECT i, ${repeated('😀', 500)} AS emoji FROM n`,
      `SELECT id, ${repeated('<br>\n', 300)} AS lines FROM blocks`,
    ];
    const sizes: number[] = [];
    for (const sql of hostile) {
      const response = await query(sql);
      expect([sql, response.status]).toEqual([sql, 200]);
      const bytes = Buffer.byteLength(response.body);
      sizes.push(bytes);
      expect([sql, bytes <= ANSWER_BYTES]).toEqual([sql, true]);
      const answer = (response.json() as unknown as { result: Answer }).result;
      expect([sql, answer.truncated]).toEqual([sql, true]);
      consistent(answer);
      // Cut close to the bound, not far below it: the answer is as large as it may be.
      expect([sql, bytes > ANSWER_BYTES * 0.9]).toEqual([sql, true]);
    }
    expect(sizes).toHaveLength(hostile.length);
  });

  it('sends a small answer whole, not truncated', async () => {
    const { query } = await serve();
    const response = await query('SELECT id, content FROM blocks ORDER BY id LIMIT 5', 5);
    const answer = (response.json() as unknown as { result: Answer }).result;
    expect([response.status, answer.rowCount, answer.truncated, answer.blocks.length]).toEqual([200, 5, false, 5]);
    consistent(answer);
  });

  it('refuses columns whose names alone would not fit, with 400 naming the field', async () => {
    const { query } = await serve();
    const name = String.fromCharCode(1).repeat(5000);
    const response = await query(`WITH t AS (SELECT 1 AS "${name}") SELECT * FROM t a, t b, t c, t d, t e, t f`);
    const error = response.json().error;
    expect([response.status, error?.code, error?.details.field, error?.details.reason]).toEqual([400, 'INVALID_INPUT', 'sql', 'too_wide']);
  });
});
