import { describe, expect, it } from 'vitest';
import { caught } from '../../helpers/harness.js';
import { agent, useBlocks } from './blocks-harness.js';

const { boot } = useBlocks();

interface Created { id: string }
interface Tree { document: { children: { id: string }[] } }

describe('the gate sees the notebook of the blocks an agent call names', () => {
  it('applies a notebook deny rule to calls that name only a block or document of that notebook', async () => {
    const first = await boot();
    const guarded = await first.act<Created>('notebook_create', { name: 'Guarded' });
    const open = await first.act<Created>('notebook_create', { name: 'Open' });
    const doc = await first.act<Created>('document_create', { notebook: guarded.id, title: 'Kept', markdown: 'a\n\nb\n' });
    const other = await first.act<Created>('document_create', { notebook: open.id, title: 'Free', markdown: 'c\n' });
    const [block] = (await first.act<Tree>('document_get', { id: doc.id })).document.children;
    const [freeBlock] = (await first.act<Tree>('document_get', { id: other.id })).document.children;
    const root = first.kernel.workspace.root;
    await first.kernel.close();
    const { act } = await boot({ workspace: root, config: { gate: { allowAutoMode: true, deny: [{ tool: 'block', notebook: guarded.id }, { tool: 'attr', notebook: guarded.id }] } } });
    const byAgent = agent();
    for (const [target, input] of [
      ['block_update', { id: block!.id, markdown: 'x' }],
      ['block_append', { parentId: doc.id, markdown: 'x' }],
      ['block_delete', { id: block!.id }],
      // Moving a block out of the open notebook into the guarded one touches both.
      ['block_move', { id: freeBlock!.id, previousId: block!.id }],
    ] as const) {
      expect([target, (await caught(act(target, input, byAgent))).code]).toEqual([target, 'ACTION_DENIED']);
    }
    expect(await act('attr_set', { id: freeBlock!.id, attrs: { 'custom-ok': 'yes' } }, byAgent)).toMatchObject({ id: freeBlock!.id });
  });

});
