import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newId } from '../../core/ids.js';
import { caught } from '../helpers/harness.js';
import { admin, agent, useBlocks } from './blocks/blocks-harness.js';

const { boot } = useBlocks();

describe('todo_write', () => {
  it("replaces the task list of the agent's session in todos.json", async () => {
    const { kernel, act } = await boot();
    const session = newId();
    await kernel.sessions.save({ id: session, entries: [] });
    const byAgent = agent(session, 't1', 'c1');
    await act('todo_write', { todos: [{ content: 'read the notes', status: 'in_progress' }, { content: 'summarise', status: 'pending' }] }, byAgent);
    const result = await act<{ completed: number; pending: number }>('todo_write', { todos: [{ content: 'read the notes', status: 'completed' }, { content: 'summarise', status: 'in_progress' }] }, byAgent);
    expect(result).toMatchObject({ completed: 1, pending: 0 });
    const file = JSON.parse(await readFile(join(kernel.workspace.agentDir, 'sessions', session, 'todos.json'), 'utf8'));
    expect(file.todos).toEqual([{ content: 'read the notes', status: 'completed' }, { content: 'summarise', status: 'in_progress' }]);
    expect(await kernel.sessions.readTodos(session)).toEqual(file.todos);
  });

  it('is for the agent only, needs an existing session, and checks the statuses', async () => {
    const { kernel, act } = await boot();
    expect((await caught(act('todo_write', { todos: [] }, admin))).code).toBe('ACTION_NOT_FOUND');
    expect((await caught(act('todo_write', { todos: [] }, agent(newId(), 't', 'c')))).code).toBe('NOT_FOUND');
    const session = newId();
    await kernel.sessions.save({ id: session, entries: [] });
    expect((await caught(act('todo_write', { todos: [{ content: 'x', status: 'done' }] }, agent(session, 't', 'c')))).code).toBe('INVALID_INPUT');
  });
});
