import { describe, expect, it } from 'vitest';
import { TURN_ROLLBACK, type TurnRollback } from '../../core/turn/snapshot-service.js';
import { useBlocks } from './blocks/blocks-harness.js';
import { agentTurn as agentTurnOf, type Created, type Tree } from './turn-rollback-harness.js';

const { boot } = useBlocks();
const agentTurn = (...args: Parameters<typeof agentTurnOf> extends [unknown, ...infer Rest] ? Rest : never) => agentTurnOf(boot, ...args);

interface Listed { snapshots: { id: string; memo: string; origin: string }[] }

describe('undoing a turn whose end was not recorded (a crash cut it short)', () => {
  it("undoes the turn's own blocks by their stamps and keeps what a person wrote since, forced or not", async () => {
    for (const force of [false, true]) {
      const turn = await agentTurn();
      // The turn's end snapshot is what a crash (or a failed end snapshot) leaves missing.
      const listed = await turn.act<Listed>('snapshot_list', { origin: `agent:${turn.sessionId}/` });
      const end = listed.snapshots.filter((snapshot) => snapshot.memo === 'agent turn end');
      expect(end).toHaveLength(1);
      await turn.act('snapshot_delete', { ids: end.map((snapshot) => snapshot.id) });
      // Since then the person edited the turn's document and made a document of their own.
      await turn.act('block_update', { id: turn.second, markdown: 'person edited two later' });
      const notebook = (await turn.act<{ notebook: string }>('document_info', { id: turn.doc })).notebook;
      const mine = await turn.act<Created>('document_create', { notebook, title: 'Mine', markdown: 'person wrote this later' });
      const result = await turn.rollback(force);
      expect(result).toMatchObject({ mode: 'blocks', conflicts: [] });
      expect(await turn.texts()).toEqual(['person one', 'person edited two later']);
      expect((await turn.act<Tree>('document_get', { id: mine.id })).document.children.map((block) => block.content)).toEqual(['person wrote this later']);
      expect(await turn.act<{ problems: unknown[] }>('index_problems', {})).toMatchObject({ problems: [] });
    }
  });

  it('lists a document removed since the turn began as a conflict (nobody knows who removed it), written back only when forced', async () => {
    const turn = await agentTurn();
    const listed = await turn.act<Listed>('snapshot_list', { origin: `agent:${turn.sessionId}/` });
    await turn.act('snapshot_delete', { ids: listed.snapshots.filter((snapshot) => snapshot.memo === 'agent turn end').map((snapshot) => snapshot.id) });
    await turn.act('document_remove', { id: turn.doc });
    const result = await turn.rollback();
    expect(result.conflicts).toEqual([{ path: expect.stringContaining(`${turn.doc}.json`) }]);
    await expect(turn.act('document_get', { id: turn.doc })).rejects.toThrow();
    expect((await turn.rollback(true)).conflicts).toEqual([]);
    expect(await turn.texts()).toEqual(['person one', 'person two']);
  });
});

describe('undoing a turn whose document a person moved since', () => {
  it("undoes the turn's blocks where the document is now, and leaves it there", async () => {
    const turn = await agentTurn();
    const notebook = (await turn.act<{ notebook: string }>('document_info', { id: turn.doc })).notebook;
    const parent = await turn.act<Created>('document_create', { notebook, title: 'Parent', markdown: 'parent' });
    await turn.act('document_move', { id: turn.doc, notebook, parentId: parent.id });
    const result = await turn.rollback();
    expect(result).toMatchObject({ mode: 'blocks', conflicts: [] });
    expect(await turn.texts()).toEqual(['person one', 'person two']);
    expect((await turn.act<{ parentId: string | null }>('document_info', { id: turn.doc })).parentId).toBe(parent.id);
    expect(await turn.act<{ problems: unknown[] }>('index_problems', {})).toMatchObject({ problems: [] });
  });
});

describe('undoing a turn again after a kill cut its undo short (its files put back, its record not saved)', () => {
  it('finds nothing left to undo and no conflicts, whether the first undo restored the snapshot or went block by block', async () => {
    for (const personLater of [false, true]) {
      const turn = await agentTurn();
      if (personLater) await turn.act('block_update', { id: turn.second, markdown: 'person edited two later' });
      // The files are put back (as the journal finishes them at the next start); the session's record is not written.
      const first = await turn.kernel.container.resolve<TurnRollback>(TURN_ROLLBACK).rollbackTurn(turn.sessionId, turn.turnId, false);
      expect(first.mode).toBe(personLater ? 'blocks' : 'restore');
      const again = await turn.rollback();
      expect(again).toMatchObject({ mode: 'blocks', conflicts: [], undone: [] });
      expect(await turn.texts()).toEqual(['person one', personLater ? 'person edited two later' : 'person two']);
      const stored = await turn.kernel.sessions.readStored(turn.sessionId);
      expect(stored.entries.at(-1)).toMatchObject({ type: 'rollback', conflicts: [] });
    }
  });
});

describe('two undos of a session at once', () => {
  it('refuses the second while the first runs, saying an undo is under way (409, reason rollback)', async () => {
    const turn = await agentTurn();
    const [a, b] = await Promise.all([turn.rollbackAnswer(), turn.rollbackAnswer()]);
    const refused = [a, b].find((response) => response.status === 409)!;
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    expect(await refused.json()).toMatchObject({ error: { code: 'CONFLICT', message: expect.stringContaining('is undoing a turn; try again once that is done'), details: { reason: 'rollback' } } });
  });
});
