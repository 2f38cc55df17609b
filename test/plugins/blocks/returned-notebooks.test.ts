import { describe, expect, it } from 'vitest';
import { notebooksInResult } from '../../../core/pipeline/prepared-call.js';
import type { Principal } from '../../../core/plugin-api.js';
import { admin, agent, useBlocks } from './blocks-harness.js';

/**
 * The notebooks a block write's result names (what withholds it from a model off this machine when one
 * is local-only): the writes inside one document say their document's notebook without looking their
 * block ids up, and must say exactly what the lookup said.
 */
describe('notebooks named by the results of block writes', () => {
  const { boot } = useBlocks();

  it('are the notebook of the document written, for insert, append, prepend, update and delete, and stay right after a move', async () => {
    const { kernel, act } = await boot();
    const a = (await act<{ id: string }>('notebook_create', { name: 'A' })).id;
    const b = (await act<{ id: string }>('notebook_create', { name: 'B' })).id;
    const doc = (await act<{ id: string }>('document_create', { notebook: a, title: 'Doc', markdown: 'first' })).id;
    const reported = async (target: string, input: Record<string, unknown>, principal: Principal = agent()) => {
      const outcome = await kernel.pipeline.call({ target, input, principal, sessionMode: 'auto' });
      if (outcome.status !== 'ok') throw new Error(`${target}: ${outcome.status}`);
      return { value: outcome.value as Record<string, unknown>, notebooks: notebooksInResult(outcome.call) };
    };
    const appended = await reported('block_append', { parentId: doc, markdown: 'second' });
    expect(appended.notebooks).toEqual([a]);
    // What the lookup of every id says, for a result that names the same blocks and is not marked.
    expect((await reported('block_get_children', { id: doc })).notebooks).toEqual(appended.notebooks);
    const id = (appended.value.ids as string[])[0]!;
    expect((await reported('block_prepend', { parentId: doc, markdown: 'zero' })).notebooks).toEqual([a]);
    expect((await reported('block_insert', { previousId: id, markdown: 'third' })).notebooks).toEqual([a]);
    expect((await reported('block_update', { id, markdown: 'second, changed\n\nand one more' })).notebooks).toEqual([a]);
    // Moved to another notebook: the same kind of write now names that one.
    await act('document_move', { id: doc, notebook: b }, admin);
    expect((await reported('block_append', { parentId: doc, markdown: 'after the move' })).notebooks).toEqual([b]);
    expect((await reported('block_get_children', { id: doc })).notebooks).toEqual([b]);
    expect((await reported('block_delete', { id })).notebooks).toEqual([b]);
  });
});
