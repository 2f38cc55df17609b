import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Kernel } from '../../core/kernel.js';
import { newId } from '../../core/ids.js';
import { SNAPSHOT_SERVICE, type SnapshotService } from '../../core/turn/snapshot-service.js';
import { undoTurn } from '../../core/turn/undo-turn.js';
import { useBlocks } from './blocks/blocks-harness.js';

/**
 * A turn's undo where the turn's end or the person's later moves leave less to go by: a turn cut short
 * (its start snapshot only), and documents and containers moved after it. The turn's writes are made as
 * the agent (`agent:<session>/<turn>/<call>`), as its tool calls are.
 */
const { boot } = useBlocks();
interface Created { id: string }
interface Node { id: string; content?: string; children?: Node[] }

async function scene(workspace?: string) {
  const { kernel, act } = await boot(workspace ? { workspace } : {});
  const sessionId = newId();
  const turnId = newId();
  const asAgent = async <T,>(target: string, input: Record<string, unknown>): Promise<T> => {
    const outcome = await kernel.pipeline.call({ target, input, principal: { kind: 'agent', name: `agent:${sessionId}/${turnId}/c1`, role: 'admin', sessionId, turnId }, sessionMode: 'auto' });
    if (outcome.status !== 'ok') throw new Error(`${target} was not run: ${outcome.status}`);
    return outcome.value as T;
  };
  const snapshot = (memo: string) => kernel.container.resolve<SnapshotService>(SNAPSHOT_SERVICE).snapshot({ sessionId, turnId, memo });
  const begin = async () => {
    await kernel.sessions.save({ id: sessionId, entries: [] });
    await snapshot('agent auto snapshot');
  };
  const texts = async (id: string) => {
    const out: string[] = [];
    const visit = (node: Node) => { for (const child of node.children ?? []) { if (child.content !== undefined) out.push(child.content); visit(child); } };
    visit((await act<{ document: Node }>('document_get', { id })).document);
    return out;
  };
  return { kernel, act, asAgent, begin, end: () => snapshot('agent turn end'), texts, undo: (k: Kernel, force = false) => undoTurn(k, sessionId, turnId, force, 'person:alice'), sessionId, turnId };
}

describe('undoing a turn cut short, or one whose documents were moved since', () => {
  it("leaves a document a person edited by hand while the kernel was down: no stamp says it is the turn's", async () => {
    const first = await scene();
    const notebook = await first.act<Created>('notebook_create', { name: 'N' });
    const a = await first.act<Created>('document_create', { notebook: notebook.id, title: 'A', markdown: 'agent target' });
    const b = await first.act<Created>('document_create', { notebook: notebook.id, title: 'B', markdown: 'person text v1' });
    await first.begin();
    const [target] = (await first.act<{ document: Node }>('document_get', { id: a.id })).document.children!;
    await first.asAgent('block_update', { id: target!.id, markdown: 'agent wrote' });
    const root = first.kernel.workspace.root;
    await first.kernel.close();
    // A crash, then the person's editor changes B's file: the kernel takes the text in, with no new stamp.
    const file = join(root, 'data', notebook.id, `${b.id}.json`);
    await writeFile(file, (await readFile(file, 'utf8')).replace('person text v1', 'person text v2'));
    const again = await boot({ workspace: root });
    const result = await undoTurn(again.kernel, first.sessionId, first.turnId, false, 'person:alice');
    expect(result.conflicts).toEqual([]);
    const text = async (id: string) => (await again.act<{ markdown: string }>('document_get_markdown', { id })).markdown;
    expect(await text(b.id)).toBe('person text v2\n');
    expect(await text(a.id)).toBe('agent target\n');
  });

  it('never removes a block the turn edited that a person then moved (with its list) to another document, forced or not', async () => {
    for (const force of [false, true]) {
      const turn = await scene();
      const notebook = await turn.act<Created>('notebook_create', { name: 'N' });
      const a = await turn.act<Created>('document_create', { notebook: notebook.id, title: 'A', markdown: 'intro\n\n- item one\n- item two' });
      const p = await turn.act<Created>('document_create', { notebook: notebook.id, title: 'P', markdown: 'person doc' });
      await turn.begin();
      const list = (await turn.act<{ document: Node }>('document_get', { id: a.id })).document.children![1]!;
      await turn.asAgent('block_update', { id: list.children![0]!.children![0]!.id, markdown: 'item one (agent edit)' });
      // Cut short (no end snapshot); the person moves the list into P.
      const [personDoc] = (await turn.act<{ document: Node }>('document_get', { id: p.id })).document.children!;
      await turn.act('block_move', { id: list.id, previousId: personDoc!.id });
      const result = await turn.undo(turn.kernel, force);
      expect(result.conflicts.length).toBeGreaterThan(0);
      expect([force, await turn.texts(a.id), await turn.texts(p.id)]).toEqual([force, ['intro'], ['person doc', 'item one (agent edit)', 'item two']]);
      expect(await turn.act<{ problems: unknown[] }>('index_problems', {})).toMatchObject({ problems: [] });
    }
  });

  it("lists the move of a turn cut short as a conflict (who moved it no record says), and undoes its blocks where it is", async () => {
    const turn = await scene();
    const notebook = await turn.act<Created>('notebook_create', { name: 'N' });
    const x = await turn.act<Created>('document_create', { notebook: notebook.id, title: 'X', markdown: 'person text' });
    const p = await turn.act<Created>('document_create', { notebook: notebook.id, title: 'P', markdown: 'other' });
    await turn.begin();
    await turn.asAgent('document_move', { id: x.id, notebook: notebook.id, parentId: p.id });
    const [block] = (await turn.act<{ document: Node }>('document_get', { id: x.id })).document.children!;
    await turn.asAgent('block_update', { id: block!.id, markdown: 'agent text' });
    const result = await turn.undo(turn.kernel);
    expect(result.conflicts).toEqual([{ path: `${notebook.id}/${x.id}.json` }]);
    expect(await turn.texts(x.id)).toEqual(['person text']);
  });

  it("keeps a document the turn made while a person's child document is under it, and lists it", async () => {
    const turn = await scene();
    const notebook = await turn.act<Created>('notebook_create', { name: 'N' });
    await turn.begin();
    const made = await turn.asAgent<Created>('document_create', { notebook: notebook.id, title: 'D', markdown: 'agent made this' });
    await turn.end();
    const child = await turn.act<Created>('document_create', { notebook: notebook.id, parentId: made.id, title: 'Mine', markdown: 'person child doc' });
    for (const force of [false, true]) {
      const result = await turn.undo(turn.kernel, force);
      expect(result.conflicts).toEqual([{ path: `${notebook.id}/${made.id}.json` }]);
    }
    expect(await turn.texts(child.id)).toEqual(['person child doc']);
    expect(await turn.act<{ problems: unknown[] }>('index_problems', {})).toMatchObject({ problems: [] });
  });

  it("never takes another notebook's settings for those of a notebook the turn made that a person removed since", async () => {
    for (const force of [false, true]) {
      const turn = await scene();
      const keep = await turn.act<Created>('notebook_create', { name: 'Keep' });
      const kept = await turn.act<Created>('document_create', { notebook: keep.id, title: 'K', markdown: 'person notes' });
      await turn.begin();
      const made = await turn.asAgent<Created>('notebook_create', { name: 'Agent notebook' });
      await turn.asAgent('document_create', { notebook: made.id, title: 'D', markdown: 'agent doc' });
      await turn.end();
      await turn.act('notebook_remove', { id: made.id });
      // Every notebook's settings file has the same name: forced, the person's notebook lost its settings.
      expect((await turn.undo(turn.kernel, force)).conflicts).toEqual([]);
      expect((await turn.act<{ notebooks: { name: string }[] }>('notebook_list', {})).notebooks.map((notebook) => notebook.name)).toEqual(['Keep']);
      expect(await turn.texts(kept.id)).toEqual(['person notes']);
    }
  });

  it('puts a block the turn moved back only where it is nowhere else: a person moved it on into a document the turn also wrote', async () => {
    const turn = await scene();
    const notebook = await turn.act<Created>('notebook_create', { name: 'N' });
    const [a, b, c] = [await turn.act<Created>('document_create', { notebook: notebook.id, title: 'A', markdown: 'a1\n\na2' }),
      await turn.act<Created>('document_create', { notebook: notebook.id, title: 'B', markdown: 'b1' }),
      await turn.act<Created>('document_create', { notebook: notebook.id, title: 'C', markdown: 'c1\n\nc2' })];
    const children = async (id: string) => (await turn.act<{ document: Node }>('document_get', { id })).document.children!;
    const x = (await children(a.id))[0]!.id;
    await turn.begin();
    await turn.asAgent('block_move', { id: x, previousId: (await children(b.id))[0]!.id });
    await turn.asAgent('block_update', { id: (await children(c.id))[1]!.id, markdown: 'c2 agent' });
    await turn.end();
    await turn.act('block_move', { id: x, previousId: (await children(c.id))[0]!.id });
    const result = await turn.undo(turn.kernel);
    expect(result.conflicts).toContainEqual(expect.objectContaining({ id: x }));
    // It was put back in A and stayed in C: in two documents, said nowhere.
    expect([await turn.texts(a.id), await turn.texts(b.id), await turn.texts(c.id)]).toEqual([['a2'], ['b1'], ['c1', 'a1', 'c2']]);
  });

  it('lists a document the turn made that a person moved since where it is now, and undoing again still finds it', async () => {
    const turn = await scene();
    const notebook = await turn.act<Created>('notebook_create', { name: 'N' });
    const p = await turn.act<Created>('document_create', { notebook: notebook.id, title: 'P', markdown: 'person parent' });
    await turn.begin();
    const made = await turn.asAgent<Created>('document_create', { notebook: notebook.id, title: 'D', markdown: 'agent made this' });
    await turn.end();
    await turn.act('document_move', { id: made.id, notebook: notebook.id, parentId: p.id });
    const moved = `${notebook.id}/${p.id}/${made.id}.json`;
    expect((await turn.undo(turn.kernel)).conflicts).toEqual([{ path: moved }]);
    expect((await turn.undo(turn.kernel)).conflicts).toEqual([{ path: moved }]);
    expect((await turn.undo(turn.kernel, true)).conflicts).toEqual([]);
    await expect(turn.act('document_get', { id: made.id })).rejects.toThrow();
    expect(await turn.texts(p.id)).toEqual(['person parent']);
  });
});
