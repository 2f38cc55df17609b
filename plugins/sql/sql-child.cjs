// @ts-check
'use strict';
/**
 * The SQL tool's worker process. It holds one read-only connection to the index and runs one statement
 * at a time for its parent. It is a separate process because a runaway statement (an endless recursive
 * CTE) cannot be interrupted inside SQLite from JavaScript; the parent kills this process with SIGKILL
 * and starts another. Plain CommonJS so that it runs the same from the sources and from the build.
 *
 * argv: [dbFile, betterSqlite3Path]. Messages in: { id, sql, maxRows, maxCellBytes, maxResultBytes }.
 * Messages out: { id, ok: true, columns, rows, truncated, cellsTruncated, existing } | { id, ok: false, reason, message }.
 */
const [dbFile, driverPath] = process.argv.slice(2);
const { Worker } = require('node:worker_threads');
const Database = require(/** @type {string} */ (driverPath));
const db = new Database(dbFile, { readonly: true, fileMustExist: true });
db.pragma('query_only = ON');
// Sorts and temporary b-trees stay in memory, where the parent's address-space limit bounds them,
// instead of filling the temporary folder.
db.pragma('temp_store = MEMORY');
db.pragma('cache_size = -16000');

/**
 * A watchdog on its own thread: while a statement runs, this process's main thread is inside SQLite and
 * cannot notice anything. The watchdog ends the process if the parent has gone (this process was
 * re-parented) or a statement runs past its deadline plus a grace period, so that a runaway statement
 * never outlives the kernel that asked for it.
 */
const deadline = new Float64Array(new SharedArrayBuffer(8));
const watchdog = new Worker(`
  const { workerData } = require('node:worker_threads');
  const deadline = new Float64Array(workerData.shared);
  setInterval(() => {
    const parentGone = process.ppid !== workerData.ppid;
    const overdue = deadline[0] > 0 && Date.now() > deadline[0];
    if (parentGone || overdue) process.kill(process.pid, 'SIGKILL');
  }, 100);
`, { eval: true, workerData: { ppid: process.ppid, shared: deadline.buffer } });
watchdog.unref();
process.on('disconnect', () => process.exit(0));

/** Columns whose values may be block ids, for links to the blocks that exist. */
const ID_COLUMNS = new Set(['id', 'block_id', 'root_id', 'parent_id', 'def_block_id', 'documentId', 'document_id']);
const ID_PATTERN = /^\d{14}-[0-9a-z]{7}$/;
const existsStatement = db.prepare('SELECT id FROM blocks WHERE id IN (SELECT value FROM json_each(?))').pluck();

/** The first keyword after leading whitespace and comments. */
function firstKeyword(sql) {
  const stripped = sql.replace(/^(\s+|--[^\n]*(\n|$)|\/\*[\s\S]*?\*\/)*/u, '');
  return (/^[A-Za-z]+/u.exec(stripped)?.[0] ?? '').toUpperCase();
}

const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

function cell(value, maxCellBytes, state) {
  if (Buffer.isBuffer(value)) return `<blob, ${value.length} bytes>`;
  // Integers come as BigInt (safeIntegers below): a number when JSON's numbers hold it exactly, else its
  // digits as a string (9007199254740993 was answered 9007199254740992, silently).
  if (typeof value === 'bigint') return value >= MIN_SAFE && value <= MAX_SAFE ? Number(value) : value.toString();
  if (typeof value === 'string' && Buffer.byteLength(value) > maxCellBytes) {
    state.cellsTruncated = true;
    return `${Buffer.from(value).subarray(0, maxCellBytes).toString('utf8').replace(/\uFFFD$/u, '')}…`;
  }
  return value;
}

function run(request) {
  const { sql, maxRows, maxCellBytes, maxResultBytes } = request;
  if (firstKeyword(sql) === '') return { ok: false, reason: 'empty', message: 'The statement is empty' };
  let statement;
  try {
    statement = db.prepare(sql);
  } catch (error) {
    const message = said(error);
    if (/more than one statement/i.test(message)) return { ok: false, reason: 'multiple_statements', message: 'Only one statement can be run at a time; remove everything after the first ;' };
    return { ok: false, reason: 'sql_error', message };
  }
  if (!(statement.readonly && statement.reader)) {
    return { ok: false, reason: 'not_read_only', message: 'Only statements that read are allowed: no writes, ATTACH, VACUUM, PRAGMA changes, temporary tables or transaction control' };
  }
  const keyword = firstKeyword(sql);
  if (keyword !== 'SELECT' && keyword !== 'WITH') return { ok: false, reason: 'not_select', message: `Only SELECT and WITH statements are allowed, not ${keyword}` };
  statement.raw(true);
  statement.safeIntegers(true);
  const columns = statement.columns().map((column) => column.name);
  const state = { cellsTruncated: false };
  const rows = [];
  let bytes = 0;
  let truncated = false;
  try {
    for (const raw of statement.iterate()) {
      if (rows.length >= maxRows) { truncated = true; break; }
      const row = raw.map((value) => cell(value, maxCellBytes, state));
      bytes += Buffer.byteLength(JSON.stringify(row));
      if (bytes > maxResultBytes) { truncated = true; break; }
      rows.push(row);
    }
  } catch (error) {
    return { ok: false, reason: 'sql_error', message: said(error) };
  }
  const candidates = new Set();
  columns.forEach((name, index) => {
    if (!ID_COLUMNS.has(name)) return;
    for (const row of rows) if (typeof row[index] === 'string' && ID_PATTERN.test(row[index])) candidates.add(row[index]);
  });
  const existing = candidates.size > 0 ? existsStatement.all(JSON.stringify([...candidates].slice(0, 1000))) : [];
  return { ok: true, columns, rows, truncated, cellsTruncated: state.cellsTruncated, existing };
}

/** An error's message as sent to the kernel: SQLite may quote a value in it, of any size (a 60 MB string). */
const MAX_MESSAGE_CHARS = 4000;
function said(error) {
  const message = error instanceof Error ? error.message : String(error);
  return message.length <= MAX_MESSAGE_CHARS ? message : message.slice(0, MAX_MESSAGE_CHARS);
}

process.on('message', (request) => {
  let response;
  // The parent kills this process at the deadline; the watchdog does so a little later if it cannot.
  deadline[0] = Date.now() + request.timeoutMs + 1000;
  try {
    response = { id: request.id, ...run(request) };
  } catch (error) {
    response = { id: request.id, ok: false, reason: 'sql_error', message: said(error) };
  }
  deadline[0] = 0;
  process.send?.(response);
});
process.send?.({ ready: true });
