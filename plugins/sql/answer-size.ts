import { KernelError } from '../../core/index.js';
import { markdownTable } from './markdown-table.js';

/** What `sql query` answers. */
export interface SqlAnswer {
  columns: string[];
  rows: unknown[][];
  rowCount: number;
  truncated: boolean;
  cellsTruncated: boolean;
  limit: number;
  blocks: { id: string; link: string }[];
  markdown: string;
}

/** What the SQL process found, before the answer is fitted to its size. */
export interface QueryResult {
  columns: string[];
  rows: unknown[][];
  truncated: boolean;
  cellsTruncated: boolean;
  /** Block ids shown in the rows that exist, in the order found. */
  existing: string[];
  limit: number;
}

/** An HTTP answer wraps the result as `{"result":…}`; counted so that what is sent stays in the bound. */
const ENVELOPE_BYTES = Buffer.byteLength('{"result":}');

/** The answer's size as sent: JSON, UTF-8 bytes, escapes included. */
export function answerBytes(answer: SqlAnswer): number {
  return Buffer.byteLength(JSON.stringify(answer)) + ENVELOPE_BYTES;
}

/** The answer holding the first `count` rows, with links only to blocks those rows show. */
function answerOf(result: QueryResult, count: number): SqlAnswer {
  const rows = count === result.rows.length ? result.rows : result.rows.slice(0, count);
  let shown: Set<unknown> | undefined;
  if (count < result.rows.length) shown = new Set(rows.flat());
  const blocks = result.existing.filter((id) => shown === undefined || shown.has(id)).map((id) => ({ id, link: `quire://blocks/${id}` }));
  return {
    columns: result.columns, rows, rowCount: rows.length, truncated: result.truncated || count < result.rows.length,
    cellsTruncated: result.cellsTruncated, limit: result.limit, blocks, markdown: markdownTable(result.columns, rows, blocks),
  };
}

/**
 * The largest answer within `maxBytes`, rows cut from the end. The rows are measured by the SQL process,
 * but the answer also carries each row a second time as a line of the Markdown table (where a pipe
 * doubles), a link per block shown, and JSON escapes (six bytes for a control character): only the
 * whole answer, serialised, tells its size. Its size grows with the rows kept, so a binary search
 * finds the cut in a dozen serialisations at most.
 */
export function fitAnswer(result: QueryResult, maxBytes: number): SqlAnswer {
  const whole = answerOf(result, result.rows.length);
  if (answerBytes(whole) <= maxBytes) return whole;
  let fits = 0;
  let tooMany = result.rows.length;
  const empty = answerOf(result, 0);
  if (answerBytes(empty) > maxBytes) {
    throw new KernelError('INVALID_INPUT', `The column names alone are larger than an answer may be (${maxBytes} bytes); select fewer or shorter columns`, { details: { field: 'sql', reason: 'too_wide' } });
  }
  let best = empty;
  while (tooMany - fits > 1) {
    const middle = Math.floor((fits + tooMany) / 2);
    const candidate = answerOf(result, middle);
    if (answerBytes(candidate) <= maxBytes) {
      fits = middle;
      best = candidate;
    } else {
      tooMany = middle;
    }
  }
  return best;
}
