import { KernelError, isValidId } from '../../core/index.js';
import { idToken, subtypeToken } from './fts-index.js';

/** What a search may be narrowed to: notebooks, a document and those below it, block types and subtypes. */
export interface ColumnFilters {
  notebooks?: readonly string[] | undefined;
  /** The document whose subtree is searched (the last id of a `path` filter). */
  document?: string | undefined;
  types?: readonly string[] | undefined;
  subtypes?: readonly string[] | undefined;
}

/** A string as one FTS5 phrase. */
function quoted(value: string): string {
  return `"${value.replace(/"/g, '""')}"`;
}

function anyOf(column: string, values: readonly string[]): string {
  return `{${column}}: (${values.map(quoted).join(' OR ')})`;
}

/**
 * The filters as FTS5 column constraints on blocks_fts, one clause each (empty: no filter). Answered
 * from the columns' doclists, they select the blocks of a type or of a notebook in milliseconds at a
 * million blocks, where the blocks table, with no index on those columns, is read whole (1.1 s).
 */
export function ftsColumnFilters(filters: ColumnFilters): string[] {
  const out: string[] = [];
  if (filters.notebooks !== undefined) out.push(anyOf('notebook', filters.notebooks.map(idToken)));
  if (filters.document !== undefined) out.push(anyOf('path', [idToken(filters.document)]));
  if (filters.types?.length) out.push(anyOf('type', filters.types));
  if (filters.subtypes?.length) out.push(anyOf('subtype', filters.subtypes.map(subtypeToken)));
  return out;
}

/** The last id of a `path` filter (`<notebook>/<document>` or a document id) names the document; every block at or below it has that id in its path. */
export function documentOfPath(path: string): string {
  const ids = path.split('/').map((part) => part.replace(/\.json$/, '')).filter((part) => part !== '');
  const last = ids[ids.length - 1];
  if (!last || !ids.every((id) => isValidId(id))) throw new KernelError('INVALID_INPUT', 'path must be a document id or a path of ids such as <notebook>/<document>', { details: { field: 'path' } });
  return last;
}
