import { KernelError, definePlugin, wholeCharacterEnd, type ActionCall } from '../../core/index.js';
import { BLOCKS_INDEX, type BlocksIndex } from '../blocks/tokens.js';
import { TABLES } from './schema-doc.js';
import { SqlRunner } from './sql-runner.js';
import { fitAnswer } from './answer-size.js';

interface QueryInput { sql: string; limit?: number; timeoutMs?: number }

/**
 * Caps that keep one answer readable by a model and small on the wire. The result's bound is of the
 * whole answer as sent (rows, table, links, JSON escapes); the SQL process stops reading rows at it too.
 */
const MAX_CELL_BYTES = 2_000;
const MAX_RESULT_BYTES = 256_000;
/** How long after the plugin's start its SQL process is started, ahead of the first statement. */
const WARM_AFTER_MS = 1_000;

/** Readers may call actions without effects; this tool reads everything, so it is for administrators and the agent only. */
function onlyAdmins(call: ActionCall): void {
  if (call.principal.role !== 'admin') throw new KernelError('FORBIDDEN', 'The SQL tool is for administrators and the agent; it can read every notebook');
  // SQL cannot be held out of one notebook, so a deny rule on any notebook closes it to the agent.
  if (call.deniedNotebooks.size > 0) throw new KernelError('FORBIDDEN', 'Some notebooks are closed to this caller (a deny rule, a notebook whose privacy is agent: none, or for an MCP client one marked local-only unless mcp.sendLocalOnly), and SQL reads all of them; use search or the document tools instead');
}

export default definePlugin({
  activate(ctx) {
    const index = ctx.get(BLOCKS_INDEX);
    const runner = new SqlRunner(index.file, ctx.log);
    // Started a moment after the kernel, not during its start: a kernel stopped soon after (a one-shot CLI
    // command, most tests) never pays for a process it does not use (a fork and better-sqlite3's load,
    // about 0.15 s of CPU), and the start does not share two cores with it. A statement before then starts it.
    const { warmAfterMs = WARM_AFTER_MS } = ctx.config as { warmAfterMs?: number };
    const warming = setTimeout(() => {
      runner.warm().catch((error: unknown) => ctx.log.warn('the SQL process did not start', { error: String(error) }));
    }, warmAfterMs);
    warming.unref();
    ctx.onDispose(() => {
      clearTimeout(warming);
      return runner.close();
    });
    return {
      sql: {
        query: async (input, call) => {
          onlyAdmins(call);
          await index.ready();
          const { sql, limit = 100, timeoutMs = 2_000 } = input as unknown as QueryInput;
          const response = await runner.run({ sql, maxRows: limit, maxCellBytes: MAX_CELL_BYTES, maxResultBytes: MAX_RESULT_BYTES, timeoutMs }, call.signal);
          if (!response.ok) {
            // SQLite puts values into some messages (`bad JSON path: '<a block's text>'`): the error holds
            // notes as a result does (every notebook's, for the release rules), and is cut to a bound.
            call.returned(index.notebooks().keys());
            throw new KernelError('INVALID_INPUT', cutMessage(response.message), { details: { field: 'sql', reason: response.reason } });
          }
          return fitAnswer({ ...response, limit }, MAX_RESULT_BYTES);
        },
        schema: (_input, call) => {
          onlyAdmins(call);
          return { tables: describeTables(index) };
        },
      },
    };
  },
});

/** The most of an SQL error's message kept: enough to say what was wrong, never a table's worth of text. */
const MAX_ERROR_CHARS = 1_000;

function cutMessage(message: string): string {
  if (message.length <= MAX_ERROR_CHARS) return message;
  const end = wholeCharacterEnd(message, MAX_ERROR_CHARS);
  return `${message.slice(0, end)}… (cut at ${end} characters)`;
}

function describeTables(index: BlocksIndex) {
  return [...TABLES].map(([name, doc]) => ({
    name,
    description: doc.description,
    columns: (index.reader.prepare(`SELECT name, type FROM pragma_table_info(?)`).all(name) as { name: string; type: string }[])
      .map((column) => ({ name: column.name, type: column.type || 'TEXT', description: doc.columns[column.name] ?? '' })),
  }));
}
