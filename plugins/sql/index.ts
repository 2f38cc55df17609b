import { KernelError, definePlugin, type ActionCall } from '../../core/index.js';
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

/** Readers may call actions without effects; this tool reads everything, so it is for administrators and the agent only. */
function onlyAdmins(call: ActionCall): void {
  if (call.principal.role !== 'admin') throw new KernelError('FORBIDDEN', 'The SQL tool is for administrators and the agent; it can read every notebook');
  // SQL cannot be held out of one notebook, so a deny rule on any notebook closes it to the agent.
  if (call.deniedNotebooks.size > 0) throw new KernelError('FORBIDDEN', 'Some notebooks are closed to this caller (a deny rule, or a notebook whose privacy is agent: none), and SQL reads all of them; use search or the document tools instead');
}

export default definePlugin({
  activate(ctx) {
    const index = ctx.get(BLOCKS_INDEX);
    const runner = new SqlRunner(index.file, ctx.log);
    runner.warm().catch((error: unknown) => ctx.log.warn('the SQL process did not start', { error: String(error) }));
    ctx.onDispose(() => runner.close());
    return {
      sql: {
        query: async (input, call) => {
          onlyAdmins(call);
          await index.ready();
          const { sql, limit = 100, timeoutMs = 2_000 } = input as unknown as QueryInput;
          const response = await runner.run({ sql, maxRows: limit, maxCellBytes: MAX_CELL_BYTES, maxResultBytes: MAX_RESULT_BYTES, timeoutMs }, call.signal);
          if (!response.ok) throw new KernelError('INVALID_INPUT', response.message, { details: { field: 'sql', reason: response.reason } });
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

function describeTables(index: BlocksIndex) {
  return [...TABLES].map(([name, doc]) => ({
    name,
    description: doc.description,
    columns: (index.reader.prepare(`SELECT name, type FROM pragma_table_info(?)`).all(name) as { name: string; type: string }[])
      .map((column) => ({ name: column.name, type: column.type || 'TEXT', description: doc.columns[column.name] ?? '' })),
  }));
}
