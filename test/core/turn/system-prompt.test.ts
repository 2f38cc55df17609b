import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newId } from '../../../core/ids.js';
import { KERNEL_VERSION } from '../../../core/paths.js';
import { turnDependencies } from '../../../core/turn/kernel-turns.js';
import { buildSystemPrompt, readAgentsFile } from '../../../core/turn/system-prompt.js';
import { runTurn } from '../../../core/turn/turn-loop.js';
import { answer, scriptedProvider, toolCalls } from '../../fakes/scripted-provider.js';
import { useHarness } from '../../helpers/harness.js';

const { boot } = useHarness();

describe('the system prompt', () => {
  it('names only the tools of the round: a disabled plugin is absent from the prompt and the tool list', async () => {
    const kernel = await boot({ realManifests: true, config: { plugins: { 'search-fulltext': { enabled: false }, 'search-semantic': { enabled: false }, blocks: { config: { watch: false, welcome: false } } } } });
    await writeFile(join(kernel.workspace.root, 'AGENTS.md'), 'Always answer in haiku.\n');
    const sessionId = newId();
    await kernel.sessions.save({ id: sessionId, entries: [] });
    const agentsFile = await readAgentsFile(kernel.workspace.root);
    const provider = scriptedProvider([answer('ok')]);
    await runTurn(turnDependencies(kernel, { requireSnapshot: false }), {
      sessionId, message: 'hi', provider, signal: new AbortController().signal,
      systemPrompt: (tools) => buildSystemPrompt({ workspaceRoot: kernel.workspace.root, kernelVersion: KERNEL_VERSION, now: new Date('2026-11-29T12:00:00Z'), tools }, agentsFile),
    }, () => undefined);
    const request = provider.requests[0]!;
    const names = request.tools.map((tool) => tool.name);
    expect(names).toContain('sql_query');
    expect(names.some((name) => name.startsWith('search_'))).toBe(false);
    const system = request.messages[0]!;
    expect(system.role).toBe('system');
    expect(system.content).not.toContain('search_fulltext');
    expect(system.content).toContain('sql_schema');
    expect(system.content).toContain('<agents_md>\nAlways answer in haiku.\n</agents_md>');
    expect(system.content.indexOf('untrusted')).toBeLessThan(system.content.indexOf('<agents_md>'));
    expect(system.content).toContain('date: 2026-11-29');
  });

  it('never offers an action a deny rule without a notebook closes, in the tools or the prompt; a notebook rule keeps it offered', async () => {
    const kernel = await boot({ plugins: ['notes'], config: { gate: { deny: [{ tool: 'note', action: 'delete' }, { tool: 'note', action: 'put', notebook: 'private' }] } } });
    const sessionId = newId();
    await kernel.sessions.save({ id: sessionId, entries: [] });
    const provider = scriptedProvider([toolCalls({ id: 'c1', name: 'note_delete', args: { name: 'n' } }), answer('ok')]);
    await runTurn(turnDependencies(kernel, { requireSnapshot: false }), {
      sessionId, message: 'hi', provider, signal: new AbortController().signal,
      systemPrompt: (tools) => buildSystemPrompt({ workspaceRoot: kernel.workspace.root, kernelVersion: KERNEL_VERSION, now: new Date(), tools }, undefined),
    }, () => undefined);
    for (const request of provider.requests) {
      expect(request.tools.map((tool) => tool.name).sort()).toEqual(['note_get', 'note_put', 'question']);
      expect(request.messages[0]!.content).toContain('tools available this round: 3');
    }
    const result = provider.requests[1]!.messages.find((message) => message.role === 'tool')!;
    expect(JSON.parse(result.content.replace(/^\[tool_output\]\n|\n\[\/tool_output\]$/g, '')).error.code).toBe('ACTION_NOT_FOUND');
  });

  it('says so when a round has no tools', () => {
    const prompt = buildSystemPrompt({ workspaceRoot: '/w', kernelVersion: '0.1.0', now: new Date(), tools: [] }, undefined);
    expect(prompt).toContain('No tools are available in this round');
    expect(prompt).not.toContain('How to use your tools');
  });
});
