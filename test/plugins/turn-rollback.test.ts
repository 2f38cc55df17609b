import { describe, expect, it, vi } from 'vitest';
import { createHttpApp } from '../../core/http/app.js';
import { newId } from '../../core/ids.js';
import { turnDependencies } from '../../core/turn/kernel-turns.js';
import { runTurn } from '../../core/turn/turn-loop.js';
import { answer, scriptedProvider, toolCalls } from '../fakes/scripted-provider.js';
import { caught } from '../helpers/harness.js';
import { useBlocks } from './blocks/blocks-harness.js';
import { agentTurn as agentTurnOf, agentTurnWith as agentTurnWithOf, auth, mover, personMeanwhile, post, twoRounds, type Created, type Tree } from './turn-rollback-harness.js';

const { boot } = useBlocks();
const agentTurn = (...args: Parameters<typeof agentTurnOf> extends [unknown, ...infer Rest] ? Rest : never) => agentTurnOf(boot, ...args);
const agentTurnWith = (...args: Parameters<typeof agentTurnWithOf> extends [unknown, ...infer Rest] ? Rest : never) => agentTurnWithOf(boot, ...args);

describe('rolling back an agent turn', () => {
  it('puts back a block the turn moved into or out of a list (inside a block the move made) when it goes block by block', async () => {
    // A paragraph moved into a list goes into a new item; undone, it is back in its place, not gone with the item.
    let turn = await agentTurnWith((act) => mover(act, (children) => ({ id: children[0]!.id, parentId: children[2]!.id })));
    await turn.act('block_update', { id: turn.second, markdown: 'person edited two later' });
    expect(await turn.rollback()).toMatchObject({ mode: 'blocks', conflicts: [] });
    expect(await turn.markdown()).toBe('person one\n\nperson edited two later\n\n- item\n');
    // A list's only item moved out goes into a new list, its old list removed; undone, both are back.
    turn = await agentTurnWith((act) => mover(act, (children) => ({ id: children[2]!.children![0]!.id, previousId: children[0]!.id })), 'person one\n\nperson two\n\n- only item');
    await turn.act('block_update', { id: turn.second, markdown: 'person edited two later' });
    const rolled = await turn.rollback();
    expect(await turn.markdown()).toBe('person one\n\nperson edited two later\n\n- only item\n');
    expect(rolled.mode).toBe('blocks');
  });

  it('puts back once a block the turn moved into a block it added inside another it added (a new list\'s item)', async () => {
    const turn = await agentTurnWith((act) => (_act, paragraphs) => {
      let requests = 0;
      return {
        id: 'nested',
        async *stream() {
          requests++;
          if (requests === 1) return yield* toolCalls({ id: 'c1', name: 'block_append', args: { parentId: paragraphs.doc, markdown: '- new item' } });
          if (requests === 2) {
            const children = (await act<{ document: { children: { id: string; children?: { id: string }[] }[] } }>('document_get', { id: paragraphs.doc })).document.children;
            return yield* toolCalls({ id: 'c2', name: 'block_move', args: { id: paragraphs.first, parentId: children.at(-1)!.children![0]!.id } });
          }
          yield* answer('done');
        },
      };
    }, 'person one\n\nperson two');
    await turn.act('block_update', { id: turn.second, markdown: 'person edited two later' });
    expect(await turn.rollback()).toMatchObject({ mode: 'blocks', conflicts: [] });
    expect(await turn.markdown()).toBe('person one\n\nperson edited two later\n');
  });

  it("keeps a person's edit made while the turn ran: only the turn's own blocks are undone", async () => {
    const { rollback, texts } = await agentTurn(personMeanwhile);
    expect(await rollback()).toMatchObject({ mode: 'blocks', conflicts: [] });
    expect(await texts()).toEqual(['person one', 'person edited two during the turn']);
  });

  it('leaves a block a person removed while the turn ran removed, as a conflict to force', async () => {
    const { rollback, texts, second } = await agentTurn((act, paragraphs) => personMeanwhile(act, paragraphs, () => act('block_delete', { id: paragraphs.second })));
    const result = await rollback();
    expect(result.mode).toBe('blocks');
    expect(result.conflicts).toEqual([expect.objectContaining({ id: second })]);
    expect(await texts()).toEqual(['person one']);
  });

  it('finds the turn\'s own snapshots: the agent cannot name one of its own \'agent turn end\' to keep later writes from the undo', async () => {
    const { rollback, texts } = await agentTurn((_act, paragraphs) => scriptedProvider([
      toolCalls({ id: 'c1', name: 'block_update', args: { id: paragraphs.first, markdown: 'agent rewrote one' } }),
      toolCalls({ id: 'c2', name: 'snapshot_create', args: { memo: 'agent turn end' } }),
      toolCalls({ id: 'c3', name: 'block_append', args: { parentId: paragraphs.doc, markdown: 'agent line after its own snapshot' } }),
      answer('done'),
    ]));
    expect(await texts()).toEqual(['agent rewrote one', 'person two', 'agent line after its own snapshot']);
    await rollback();
    expect(await texts()).toEqual(['person one', 'person two']);
  });

  it('leaves a document a person removed while the turn ran removed: only what the turn removed is the undo\'s to bring back', async () => {
    let other = '';
    const { rollback, texts, act } = await agentTurn((act, paragraphs) => {
      const rounds = [toolCalls({ id: 'c1', name: 'block_update', args: { id: paragraphs.first, markdown: 'agent rewrote one' } }), answer('done')];
      let requests = 0;
      return {
        id: 'person-removes-meanwhile',
        async *stream() {
          requests++;
          // Before the turn's first write (and its snapshot): a document of the person's; after it, the person removes it.
          if (requests === 1) other = (await act<Created>('document_create', { notebook: (await act<Created>('notebook_create', { name: 'Other' })).id, title: 'Person', markdown: 'mine' })).id;
          if (requests === 2) await act('document_remove', { id: other });
          yield* rounds[requests - 1]!;
        },
      };
    });
    await rollback();
    expect(await texts()).toEqual(['person one', 'person two']);
    expect((await caught(act('document_get', { id: other }))).code).toBe('NOT_FOUND');
  });

  it('judges a call again after the person\'s answer: a rollback meanwhile made its notebook read-only to the agent, and it is not run', async () => {
    const { kernel, act } = await boot({ config: auth });
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    const doc = await act<Created>('document_create', { notebook: notebook.id, title: 'D', markdown: 'one' });
    const [block] = (await act<Tree>('document_get', { id: doc.id })).document.children;
    await act('notebook_set_privacy', { id: notebook.id, agent: 'read' });
    const closed = await act<Created>('snapshot_create', { memo: 'closed to the agent' });
    await act('notebook_set_privacy', { id: notebook.id, agent: 'write' });
    const sessionId = newId();
    await kernel.sessions.save({ id: sessionId, entries: [] });
    const provider = scriptedProvider([toolCalls({ id: 'c1', name: 'block_update', args: { id: block!.id, markdown: 'agent wrote into a read-only notebook' } }), answer('done')]);
    const results: { ok: boolean; output: string }[] = [];
    await runTurn(turnDependencies(kernel), { sessionId, message: 'edit', provider, systemPrompt: () => '', signal: new AbortController().signal }, (event) => {
      if (event.type === 'tool_result') results.push({ ok: event.ok, output: String(event.output) });
      if (event.type !== 'confirm') return;
      // While the person decides, the notes are rolled back to when the notebook was read-only to the agent.
      void act('snapshot_rollback', { id: closed.id }).then(() => kernel.confirmations.answer(event.confirmation.id, { approved: true, argsHash: event.confirmation.argsHash, answeredBy: 'person:alice' }));
    });
    expect(results).toEqual([expect.objectContaining({ ok: false })]);
    expect((await act<Tree>('document_get', { id: doc.id })).document.children.map((child) => child.content)).toEqual(['one']);
  });

  it('undoes the turn\'s own document move and notebook removal, and leaves a document a person moved meanwhile where the person put it', async () => {
    const made: Record<string, string> = {};
    const { rollback, act, doc } = await agentTurn((act, paragraphs) => twoRounds(async () => {
      const { notebook } = await act<{ notebook: string }>('document_get', { id: paragraphs.doc });
      made.notebook = notebook;
      made.parent = (await act<Created>('document_create', { notebook, title: 'Parent', markdown: 'parent' })).id;
      made.person = (await act<Created>('document_create', { notebook, title: 'Person', markdown: 'the person moves this' })).id;
      made.scratch = (await act<Created>('notebook_create', { name: 'Scratch' })).id;
      await act('document_create', { notebook: made.scratch, title: 'In scratch', markdown: 'kept' });
      return toolCalls({ id: 'c1', name: 'document_move', args: { id: paragraphs.doc, notebook, parentId: made.parent } }, { id: 'c2', name: 'notebook_remove', args: { id: made.scratch } });
    }, () => act('document_move', { id: made.person, notebook: made.notebook, parentId: made.parent })));
    expect((await act<{ parentId: string | null }>('document_info', { id: doc })).parentId).toBe(made.parent);
    await rollback();
    // The turn's move and removal are undone: the document is back at the top, the notebook back.
    expect((await act<{ parentId: string | null }>('document_info', { id: doc })).parentId).toBeNull();
    expect((await act<{ documents: { title: string }[] }>('document_list', { notebook: made.scratch! })).documents.map((entry) => entry.title)).toEqual(['In scratch']);
    // The person's move stays.
    expect((await act<{ parentId: string | null }>('document_info', { id: made.person! })).parentId).toBe(made.parent);
  });

  it('does not write back a document the turn moved that a person has moved on since (it was then in two places), and says what it leaves', async () => {
    const made: Record<string, string> = {};
    const { rollback, act, doc } = await agentTurn((act, paragraphs) => twoRounds(async () => {
      const { notebook } = await act<{ notebook: string }>('document_get', { id: paragraphs.doc });
      made.notebook = notebook;
      made.first = (await act<Created>('document_create', { notebook, title: 'First', markdown: 'first' })).id;
      made.second = (await act<Created>('document_create', { notebook, title: 'Second', markdown: 'second' })).id;
      return toolCalls({ id: 'c1', name: 'document_move', args: { id: paragraphs.doc, notebook, parentId: made.first } });
    }));
    // After the turn, the person moves it on.
    await act('document_move', { id: doc, notebook: made.notebook, parentId: made.second });
    const result = await rollback();
    expect(result.conflicts.length).toBeGreaterThan(0);
    expect((await act<{ parentId: string | null }>('document_info', { id: doc })).parentId).toBe(made.second);
    expect(await act<{ problems: unknown[] }>('index_problems', {})).toMatchObject({ problems: [] });
  });

  it('never takes back a notebook\'s privacy a person set while the turn ran, and undoes the turn\'s rename of it', async () => {
    let notebook = '';
    // The person makes the notebook local-only while the turn runs.
    const { rollback, act } = await agentTurn((act, paragraphs) => twoRounds(async () => {
      notebook = (await act<{ notebook: string }>('document_get', { id: paragraphs.doc })).notebook;
      return toolCalls({ id: 'c1', name: 'notebook_rename', args: { id: notebook, name: 'Renamed by the agent' } });
    }, () => act('notebook_set_privacy', { id: notebook, egress: 'local-only' })));
    await rollback();
    const listed = (await act<{ notebooks: { id: string; name: string; egress?: string }[] }>('notebook_list', {})).notebooks.find((entry) => entry.id === notebook);
    expect(listed).toMatchObject({ name: 'N', egress: 'local-only' });
  });

  it('leaves a notebook a person renamed or removed while the turn ran as the person left it, and undoes the turn\'s own edit', async () => {
    const made: Record<string, string> = {};
    const { rollback, act, texts } = await agentTurn((act, paragraphs) => twoRounds(async () => {
      made.kept = (await act<Created>('notebook_create', { name: 'Kept' })).id;
      made.gone = (await act<Created>('notebook_create', { name: 'Gone' })).id;
      await act('document_create', { notebook: made.gone, title: 'In gone', markdown: 'text' });
      made.empty = (await act<Created>('notebook_create', { name: 'Empty' })).id;
      return toolCalls({ id: 'c1', name: 'block_update', args: { id: paragraphs.first, markdown: 'agent rewrote one' } });
    }, async () => {
      await act('notebook_rename', { id: made.kept, name: 'Renamed by the person' });
      await act('notebook_remove', { id: made.gone });
      await act('notebook_remove', { id: made.empty });
    }));
    const result = await rollback();
    expect([result.mode, result.conflicts]).toEqual(['blocks', []]);
    expect(await texts()).toEqual(['person one', 'person two']);
    // On the code before, the undo renamed it back and brought both notebooks back (the emptied one with its settings only).
    const names = (await act<{ notebooks: { id: string; name: string }[] }>('notebook_list', {})).notebooks.map((entry) => [entry.id, entry.name]);
    expect(names).toContainEqual([made.kept, 'Renamed by the person']);
    expect(names.map(([id]) => id)).not.toContain(made.gone);
    expect(names.map(([id]) => id)).not.toContain(made.empty);
  });

  it('reports a notebook renamed both by a person and by the turn as a conflict, and undoes the turn\'s other changes', async () => {
    let notebook = '';
    // The person renames the notebook while the turn runs; the turn renames it after (a third round).
    const { rollback, act, texts } = await agentTurn((act, paragraphs) => {
      let requests = 0;
      return {
        id: 'rename-after-person',
        async *stream() {
          requests++;
          if (requests === 1) {
            notebook = (await act<{ notebook: string }>('document_get', { id: paragraphs.doc })).notebook;
            return yield* toolCalls({ id: 'c1', name: 'block_update', args: { id: paragraphs.first, markdown: 'agent rewrote one' } });
          }
          if (requests === 2) {
            await act('notebook_rename', { id: notebook, name: 'Person name' });
            return yield* toolCalls({ id: 'c2', name: 'notebook_rename', args: { id: notebook, name: 'Agent name' } });
          }
          yield* answer('done');
        },
      };
    });
    const result = await rollback();
    expect(result.conflicts).toEqual([{ path: `${notebook}/.notebook.json` }]);
    expect(await texts()).toEqual(['person one', 'person two']);
    const name = async () => (await act<{ notebooks: { id: string; name: string }[] }>('notebook_list', {})).notebooks.find((entry) => entry.id === notebook)!.name;
    expect(await name()).toBe('Agent name');
    // Forced, the name before the turn comes back (the person's is not known to the undo).
    await rollback(true);
    expect(await name()).toBe('N');
  });

  it('refuses to undo a turn undone whole already (409): the second undo took back the person\'s edit made since', async () => {
    const { rollback, rollbackAnswer, act, first, texts } = await agentTurn();
    expect((await rollback()).conflicts).toEqual([]);
    await act('block_update', { id: first, markdown: 'my own careful rewrite' });
    for (const force of [undefined, true]) {
      const again = await rollbackAnswer(force);
      expect([again.status, ((await again.json()) as { error: { details: { reason: string } } }).error.details.reason]).toEqual([409, 'undone']);
    }
    expect(await texts()).toEqual(['my own careful rewrite', 'person two']);
  });

  it('reports a notebook the turn renamed and a person renamed after it as a conflict, keeping the person\'s name', async () => {
    let notebook = '';
    const { rollback, act, texts } = await agentTurn((act, paragraphs) => twoRounds(async () => {
      notebook = (await act<{ notebook: string }>('document_get', { id: paragraphs.doc })).notebook;
      return toolCalls({ id: 'c1', name: 'notebook_rename', args: { id: notebook, name: 'Agent name' } }, { id: 'c2', name: 'block_update', args: { id: paragraphs.first, markdown: 'agent rewrote one' } });
    }));
    await act('notebook_rename', { id: notebook, name: 'Person name' });
    const result = await rollback();
    expect(result.conflicts).toEqual([{ path: `${notebook}/.notebook.json` }]);
    expect(await texts()).toEqual(['person one', 'person two']);
    expect((await act<{ notebooks: { id: string; name: string }[] }>('notebook_list', {})).notebooks.find((entry) => entry.id === notebook)!.name).toBe('Person name');
  });

  it('undoes a turn undone in part again only where the first undo left conflicts, never over what it undid', async () => {
    const made: Record<string, string> = {};
    const { rollback, act, first, texts } = await agentTurn((act, paragraphs) => twoRounds(async () => {
      const { notebook } = await act<{ notebook: string }>('document_get', { id: paragraphs.doc });
      made.other = (await act<Created>('document_create', { notebook, title: 'Other', markdown: 'other text' })).id;
      made.otherBlock = (await act<Tree>('document_get', { id: made.other })).document.children[0]!.id;
      return toolCalls({ id: 'c1', name: 'block_update', args: { id: paragraphs.first, markdown: 'agent one' } }, { id: 'c2', name: 'block_update', args: { id: made.otherBlock, markdown: 'agent other' } });
    }));
    const otherText = async () => (await act<Tree>('document_get', { id: made.other! })).document.children.map((block) => block.content);
    // The person edits the turn's block of the first document: the undo leaves it, and undoes the other document.
    await act('block_update', { id: first, markdown: 'person edited after the turn' });
    expect((await rollback()).conflicts.map((conflict) => conflict.id)).toEqual([first]);
    expect(await otherText()).toEqual(['other text']);
    // Then writes in the other document: an undo again, forced, goes to the conflict alone.
    await act('block_update', { id: made.otherBlock!, markdown: 'person wrote after the undo' });
    expect((await rollback()).conflicts.map((conflict) => conflict.id)).toEqual([first]);
    await rollback(true);
    expect([await texts(), await otherText()]).toEqual([['person one', 'person two'], ['person wrote after the undo']]);
  });

  it('brings back a published notebook the turn removed as it was, published', async () => {
    let removed = '';
    const { rollback, act } = await agentTurn((act) => twoRounds(async () => {
      removed = (await act<Created>('notebook_create', { name: 'Shared', access: 'published' })).id;
      return toolCalls({ id: 'c1', name: 'notebook_remove', args: { id: removed } });
    }));
    expect((await rollback()).mode).toBe('restore');
    const listed = (await act<{ notebooks: { id: string; access: string }[] }>('notebook_list', {})).notebooks.find((entry) => entry.id === removed);
    expect(listed?.access).toBe('published');
  });

  it('does not put back a block the turn moved out when it has moved on since to a document the undo leaves alone (it was then in two)', async () => {
    const made: Record<string, string> = {};
    const { rollback, act, doc, first } = await agentTurn((act, paragraphs) => twoRounds(async () => {
      const { notebook } = await act<{ notebook: string }>('document_get', { id: paragraphs.doc });
      for (const title of ['Second', 'Third']) made[title] = (await act<Created>('document_create', { notebook, title, markdown: `${title} text` })).id;
      return toolCalls({ id: 'c1', name: 'block_move', args: { id: paragraphs.first, parentId: made.Second } });
    }));
    // After the turn, the person moves it on.
    await act('block_move', { id: first, parentId: made.Third });
    const result = await rollback();
    expect(result.conflicts).toEqual(expect.arrayContaining([expect.objectContaining({ id: first })]));
    const holding = [];
    for (const id of [doc, made.Second!, made.Third!]) if ((await act<Tree>('document_get', { id })).document.children.some((child) => child.id === first)) holding.push(id);
    expect(holding).toEqual([made.Third]);
  });

  it.each([false, true])('never leaves a block the turn moved in two documents when a person edited it since (forced: %s)', async (force) => {
    const made: Record<string, string> = {};
    const { rollback, act, doc, first } = await agentTurn((act, paragraphs) => twoRounds(async () => {
      const { notebook } = await act<{ notebook: string }>('document_get', { id: paragraphs.doc });
      made.Second = (await act<Created>('document_create', { notebook, title: 'Second', markdown: 'Second text' })).id;
      return toolCalls({ id: 'c1', name: 'block_move', args: { id: paragraphs.first, parentId: made.Second } });
    }));
    // After the turn, the person edits the moved block where the turn put it.
    await act('block_update', { id: first, markdown: 'person edited the moved one' });
    const result = await rollback(force);
    const holding: string[] = [];
    for (const id of [doc, made.Second!]) if ((await act<Tree>('document_get', { id })).document.children.some((child) => child.id === first)) holding.push(id);
    expect(holding).toHaveLength(1);
    expect(holding[0]).toBe(force ? doc : made.Second);
    // Not forced: a conflict where the person's edit is, and where it was not put back.
    expect(result.conflicts.map((conflict) => conflict.id)).toEqual(force ? [] : [first, first]);
  });

  it('restores the snapshot when nothing changed the notes since the turn, and records it in the session', async () => {
    const { kernel, sessionId, rollback, texts } = await agentTurn();
    expect(await texts()).toEqual(['agent rewrote one', 'person two', 'agent line']);
    expect(await rollback()).toMatchObject({ mode: 'restore', conflicts: [] });
    expect(await texts()).toEqual(['person one', 'person two']);
    const stored = await kernel.sessions.readStored(sessionId);
    expect(stored.entries.at(-1)).toMatchObject({ type: 'rollback', mode: 'restore', by: 'person:alice' });
  });

  it("undoes only the turn's own blocks when a person edited others since, keeping those edits", async () => {
    const { act, second, rollback, texts } = await agentTurn();
    await act('block_update', { id: second, markdown: 'person edited two later' });
    expect(await rollback()).toMatchObject({ mode: 'blocks', conflicts: [] });
    expect(await texts()).toEqual(['person one', 'person edited two later']);
  });

  it('reports a block changed both by the turn and later as a conflict, and undoes it only when forced', async () => {
    const { act, doc, first, rollback, texts } = await agentTurn();
    await act('block_update', { id: first, markdown: 'person fixed the agent\'s rewrite' });
    const result = await rollback();
    expect(result.mode).toBe('blocks');
    expect(result.conflicts).toEqual([expect.objectContaining({ id: first })]);
    expect(await texts()).toEqual(['person fixed the agent\'s rewrite', 'person two']);
    expect((await rollback(true)).conflicts).toEqual([]);
    expect(await texts()).toEqual(['person one', 'person two']);
    void doc;
  });

  it('undoes a turn left uncommitted (its commit failed, or the kernel stopped), recording the rollback in the session', async () => {
    const { kernel, act } = await boot({ config: auth });
    const notebook = await act<Created>('notebook_create', { name: 'N' });
    const doc = await act<Created>('document_create', { notebook: notebook.id, title: 'D', markdown: 'person one' });
    const [first] = (await act<Tree>('document_get', { id: doc.id })).document.children;
    const sessionId = newId();
    await kernel.sessions.save({ id: sessionId, entries: [] });
    await kernel.sessions.setPermissionMode(sessionId, 'auto');
    // Every commit of the turn fails: it ends with its writes made and its entries only in runtime.json.
    const save = kernel.sessions.save.bind(kernel.sessions);
    const failing = vi.spyOn(kernel.sessions, 'save').mockImplementation(async (input: unknown) => {
      if ((input as { commitTurnID?: string }).commitTurnID !== undefined) throw new Error('the commit failed');
      return save(input);
    });
    const provider = scriptedProvider([toolCalls({ id: 'c1', name: 'block_update', args: { id: first!.id, markdown: 'agent rewrote one' } }), answer('done')]);
    const outcome = await runTurn(turnDependencies(kernel), { sessionId, message: 'edit', provider, systemPrompt: () => '', signal: new AbortController().signal }, () => undefined);
    failing.mockRestore();
    expect((await kernel.sessions.read(sessionId)).recoveryTurnID).toBe(outcome.turnID);
    const response = await createHttpApp(kernel).request(`/api/agent/sessions/${sessionId}/turns/${outcome.turnID}/rollback`, post({ force: true }));
    expect(response.status).toBe(200);
    expect((await act<Tree>('document_get', { id: doc.id })).document.children.map((block) => block.content)).toEqual(['person one']);
    const stored = await kernel.sessions.readStored(sessionId);
    // The turn committed first (its tool call and answer kept), then the rollback recorded.
    expect(stored.entries.map((entry) => entry.type)).toEqual(['user', 'assistant', 'assistant', 'snapshot', 'rollback']);
    expect(stored.entries.at(-1)).toMatchObject({ type: 'rollback', turnID: outcome.turnID });
  });
});
