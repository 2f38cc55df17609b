import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Issue 17, point 4: the reader scope and the agent scope of reads (core/gate/read-scope.ts), the agent
 * scope of writes (core/gate/agent-limits.ts, in the pipeline) and the egress scope
 * (core/gate/egress-scope.ts) are each answered in one place in core. This test reads the native
 * plugins' sources: a file that queries the notes index must go through one of those answers (or a
 * blocks helper built on them), and no plugin may decide a reader's or an egress rule by itself. A new
 * plugin file that reads blocks without asking fails here; the behaviour itself is tested per action
 * in notebook-privacy-actions.test.ts.
 */
const ROOT = join(import.meta.dirname, '..', '..', '..');
const PLUGINS = join(ROOT, 'plugins');

/** SQL that reads what the notes index holds (blocks, their text, refs, tags, documents). */
const READS_NOTES = /\b(FROM|JOIN)\s+(blk\.)?(blocks|blocks_fts|block_docs|refs|tags)\b/;
/** Core's answers, and the blocks helpers that are nothing but them (access.ts, link-actions.ts, BlocksIndex.visibleTo). */
const ASKS_CORE = /\b(mayRead|readableNotebooks|readsAreScoped|canSee|canSeeNotebook|assertNotebookVisible|assertDocumentVisible|documentOfBlock|visibleTo|scopeClause)\b/;

/** Files that query the index without answering a caller, each with why. */
const NO_CALLER: Record<string, string> = {
  'blocks/block-index.ts': 'the index itself: its callers (the blocks actions) check what the caller may see',
  'sql/schema-doc.ts': 'text: an example query in a column\'s description, which nobody runs here',
  'blocks/change-mark.ts': 'keeps the change mark (its triggers, and the clear of the blocks table); returns no content',
  'blocks/fts-index.ts': 'writes the full-text rows',
  'blocks/index-schema.ts': 'creates the tables',
  'blocks/notebook-scope.ts': 'tells the gate which notebook an id lies in (no content returned)',
  'blocks/returned-notebooks.ts': 'maps the ids in a result to their notebooks (no content returned)',
  'search-semantic/block-intake.ts': 'the background indexer: no caller; what may leave is asked of core (localOnlyAmong)',
  'search-semantic/indexer.ts': 'the background indexer: no caller; what may leave is asked of core (localOnlyAmong)',
  'search-semantic/embedding-store.ts': 'the vectors store, read by semantic-search.ts, which asks core',
  'search-fulltext/fulltext-query.ts': 'runs a query within the notebooks fulltext-search.ts gives it, which asks core (the query may run on a worker thread, where no call is)',
  'search-fulltext/phrase-ranking.ts': 'ranks the hits fulltext-search.ts found within what the caller may see (it asks core); returns scores, no text',
};

function sources(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

describe('reader, agent and egress scope: one place each, in core', () => {
  const files = sources(PLUGINS).map((file) => ({ name: relative(PLUGINS, file).split('\\').join('/'), text: readFileSync(file, 'utf8') }));

  it('every native plugin file that reads the notes index asks core (or a blocks helper built on it) what the caller may see', () => {
    const readers = files.filter((file) => READS_NOTES.test(file.text));
    expect(readers.length).toBeGreaterThan(5);
    const unasked = readers.filter((file) => !ASKS_CORE.test(file.text) && NO_CALLER[file.name] === undefined).map((file) => file.name);
    expect(unasked).toEqual([]);
    // The list names no file that is gone or no longer reads the index.
    const stale = Object.keys(NO_CALLER).filter((name) => !readers.some((file) => file.name === name));
    expect(stale).toEqual([]);
  });

  it('no plugin decides who reads a notebook, or whether its text may leave, by itself', () => {
    const decides = files.filter((file) => file.name !== 'blocks/notebook-conf.ts' && file.name !== 'blocks/tokens.ts')
      .flatMap((file) => file.text.split('\n').map((line, i) => ({ where: `${file.name}:${i + 1}`, line })))
      .filter(({ line }) => /access\s*[!=]==\s*'published'|egress\s*[!=]==\s*'local-only'/.test(line))
      .map(({ where }) => where);
    expect(decides).toEqual([]);
  });

  it('the helpers the blocks plugin offers are built on core\'s answers', () => {
    const access = files.find((file) => file.name === 'blocks/access.ts')!.text;
    expect(access).toMatch(/export function canSee\([^)]*\): boolean \{\n\s*return mayRead\(/);
    const index = files.find((file) => file.name === 'blocks/index.ts')!.text;
    expect(index).toMatch(/visibleTo: \(call, notebook\) => mayRead\(/);
    expect(files.find((file) => file.name === 'blocks/link-actions.ts')!.text).toMatch(/readableNotebooks\(call, notebooks\)/);
  });
});
