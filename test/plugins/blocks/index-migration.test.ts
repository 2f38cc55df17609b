import Database from 'better-sqlite3';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { INDEX_SCHEMA_VERSION } from '../../../plugins/blocks/index-schema.js';
import { dumpIndex, useBlocks } from './blocks-harness.js';

const { boot, tempDir } = useBlocks();

interface Created { id: string }
interface Found { total: number; results: { id: string }[]; documents: { documentId: string; hpath: string; hits: number }[] }

describe('an index of an older schema', () => {
  it('is rebuilt at open, with the narrow rows search counts and filters through', async () => {
    const workspace = join(await tempDir(), 'ws');
    const first = await boot({ workspace });
    const notebook = await first.act<Created>('notebook_create', { name: 'Notes' });
    const doc = await first.act<Created>('document_create', { notebook: notebook.id, title: 'Garden', markdown: 'tomatoes in the sun\n\nmore tomatoes\n\n**basil**' });
    const before = dumpIndex(workspace);
    await first.kernel.close();
    // What an index of schema 5 looked like: no block_docs table, and its version in meta.
    const db = new Database(join(workspace, 'index', 'quire.db'));
    db.exec('DROP TABLE block_docs');
    db.prepare("UPDATE meta SET value = '5' WHERE key = 'schema'").run();
    db.close();

    const second = await boot({ workspace });
    const found = await second.act<Found>('search_fulltext', { query: 'tomatoes', notebooks: [notebook.id] });
    expect(found.total).toBe(2);
    expect(found.documents).toEqual([{ documentId: doc.id, hpath: '/Garden', hits: 2 }]);
    expect(dumpIndex(workspace)).toEqual(before);
    const reopened = new Database(join(workspace, 'index', 'quire.db'), { readonly: true });
    expect(reopened.prepare("SELECT value FROM meta WHERE key = 'schema'").pluck().get()).toBe(INDEX_SCHEMA_VERSION);
    // A paragraph's Markdown is stored only where it differs from its plain text.
    expect(reopened.prepare("SELECT content, markdown, coalesce(markdown, content) AS md FROM blocks WHERE type = 'paragraph' ORDER BY sort").all()).toEqual([
      { content: 'tomatoes in the sun', markdown: null, md: 'tomatoes in the sun' },
      { content: 'more tomatoes', markdown: null, md: 'more tomatoes' },
      { content: 'basil', markdown: '**basil**', md: '**basil**' },
    ]);
    reopened.close();
  });
});
