import { createHash } from 'node:crypto';
import { expect } from 'vitest';
import { createHttpApp } from '../../core/http/app.js';
import { newId } from '../../core/ids.js';
import { turnDependencies } from '../../core/turn/kernel-turns.js';
import type { ModelEvent, ModelProvider } from '../../core/turn/model-provider.js';
import { runTurn } from '../../core/turn/turn-loop.js';
import { answer, scriptedProvider, toolCalls } from '../fakes/scripted-provider.js';
import type { Act, useBlocks } from './blocks/blocks-harness.js';

/** The scenes of turn-rollback.test.ts: a document, an agent turn over it, and its undo over HTTP. */
const ADMIN = 'qk_rollback-admin';
export const auth = { auth: { tokens: [{ name: 'alice', role: 'admin' as const, sha256: createHash('sha256').update(ADMIN).digest('hex') }] } };
export const post = (body: unknown) => ({ method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

export interface Created { id: string }
export interface Tree { document: { children: { id: string; content?: string }[] } }
export interface Rolled { mode: string; conflicts: { path: string; id?: string }[] }

export interface Paragraphs { doc: string; first: string; second: string }

/**
 * A model that rewrites the first paragraph, while a person edits the second during the turn
 * (between the model's two rounds).
 */
export function personMeanwhile(act: Act, paragraphs: Paragraphs, edit = (): Promise<unknown> => act('block_update', { id: paragraphs.second, markdown: 'person edited two during the turn' })): ModelProvider {
  const rounds = [toolCalls({ id: 'c1', name: 'block_update', args: { id: paragraphs.first, markdown: 'agent rewrote one' } }), answer('done')];
  let requests = 0;
  return {
    id: 'person-meanwhile',
    async *stream() {
      requests++;
      if (requests === 2) await edit();
      yield* rounds[requests - 1]!;
    },
  };
}

/**
 * A model whose first request sets the scene and answers with tool calls (`first`), and whose second
 * runs `meanwhile` (what a person does while the turn runs) before it answers.
 */
export function twoRounds(first: () => Promise<ModelEvent[]>, meanwhile: () => Promise<unknown> = async () => undefined): ModelProvider {
  let requests = 0;
  return {
    id: 'two-rounds',
    async *stream() {
      requests++;
      if (requests === 1) return yield* await first();
      if (requests === 2) await meanwhile();
      yield* answer('done');
    },
  };
}

/** A document, and an agent turn: by default one that appended a paragraph and changed the first one. */
export type Boot = ReturnType<typeof useBlocks>['boot'];

export async function agentTurn(boot: Boot, model?: (act: Act, paragraphs: Paragraphs) => ModelProvider, source = 'person one\n\nperson two') {
  const { kernel, act } = await boot({ config: auth });
  const notebook = await act<Created>('notebook_create', { name: 'N' });
  const doc = await act<Created>('document_create', { notebook: notebook.id, title: 'D', markdown: source });
  const [first, second] = (await act<Tree>('document_get', { id: doc.id })).document.children;
  const sessionId = newId();
  await kernel.sessions.save({ id: sessionId, entries: [] });
  await kernel.sessions.setPermissionMode(sessionId, 'auto');
  const provider = model?.(act, { doc: doc.id, first: first!.id, second: second!.id }) ?? scriptedProvider([
    toolCalls({ id: 'c1', name: 'block_append', args: { parentId: doc.id, markdown: 'agent line' } }, { id: 'c2', name: 'block_update', args: { id: first!.id, markdown: 'agent rewrote one' } }),
    answer('done'),
  ]);
  const outcome = await runTurn(turnDependencies(kernel), { sessionId, message: 'edit', provider, systemPrompt: () => '', signal: new AbortController().signal }, () => undefined);
  expect(outcome.state).toBe('finished');
  const app = createHttpApp(kernel);
  const rollbackAnswer = (force?: boolean) => app.request(`/api/agent/sessions/${sessionId}/turns/${outcome.turnID}/rollback`, post(force === undefined ? {} : { force }));
  const rollback = async (force?: boolean) => {
    const response = await rollbackAnswer(force);
    expect(response.status).toBe(200);
    return (await response.json()) as Rolled;
  };
  const texts = async () => (await act<Tree>('document_get', { id: doc.id })).document.children.map((block) => block.content);
  const markdown = async () => (await act<{ markdown: string }>('document_get_markdown', { id: doc.id })).markdown;
  return { kernel, act, doc: doc.id, first: first!.id, second: second!.id, sessionId, turnId: outcome.turnID, rollback, rollbackAnswer, texts, markdown };
}

/** agentTurn over a document with a list after its two paragraphs, the model made with the harness's act. */
export async function agentTurnWith(boot: Boot, model: (act: Act) => (act: Act, paragraphs: Paragraphs) => ModelProvider, markdown = 'person one\n\nperson two\n\n- item') {
  let made: ((act: Act, paragraphs: Paragraphs) => ModelProvider) | undefined;
  return agentTurn(boot, (act, paragraphs) => (made ??= model(act))(act, paragraphs), markdown);
}

/** A model that moves a block (its id and where to, from the document as it is) in one call, then answers. */
export function mover(act: Act, where: (children: { id: string; children?: { id: string }[] }[]) => Record<string, string>): (act: Act, paragraphs: Paragraphs) => ModelProvider {
  return (_act, paragraphs) => {
    let requests = 0;
    return {
      id: 'mover',
      async *stream() {
        requests++;
        if (requests > 1) return yield* answer('done');
        const children = (await act<{ document: { children: { id: string; children?: { id: string }[] }[] } }>('document_get', { id: paragraphs.doc })).document.children;
        yield* toolCalls({ id: 'c1', name: 'block_move', args: where(children) });
      },
    };
  };
}

