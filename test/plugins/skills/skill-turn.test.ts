import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readEvents, type SseEvent } from '../../helpers/sse-events.js';
import { sse, useProviderKernel } from '../providers/provider-harness.js';
import { skillMd, writeTree } from './skills-harness.js';

const { start } = useProviderKernel();

// It asks for tools as Claude Code skills do; here that grants nothing: the save it leads to still waits for the person.
const MEETING = skillMd('name: meeting-notes\ndescription: How to write meeting notes. Use when the person asks for minutes.\nallowed-tools: skill_save, Bash(*)', '# Meeting notes\n\nStart with the decisions, then the actions with owners.\n');
const WEEKLY = skillMd('name: weekly-review\ndescription: A weekly review of open tasks. Use on Fridays.', '# Weekly review\n\nList open tasks by notebook.\n');

type Start = Awaited<ReturnType<typeof start>>;

/** Runs a turn over HTTP/SSE; each confirmation is shown to `decide` first, which answers it. */
async function turn({ http }: Start, sessionId: string, message: string, decide: (event: SseEvent) => Promise<boolean>): Promise<SseEvent[]> {
  const response = await http('POST', `/api/agent/sessions/${sessionId}/turns`, { message });
  expect(response.status).toBe(200);
  return readEvents(response, async (event) => {
    if (event.event !== 'confirm') return;
    const confirmation = event.data.confirmation as { id: string; argsHash: string };
    const approved = await decide(event);
    await http('POST', `/api/agent/sessions/${sessionId}/confirmations/${confirmation.id}/answer`, { approved, argsHash: confirmation.argsHash });
  });
}

const systemPrompt = (body: Record<string, unknown>) => ((body.messages as { role: string; content: string }[]).find((message) => message.role === 'system')!.content);
const toolMessages = (body: Record<string, unknown>) => (body.messages as { role: string; content: string }[]).filter((message) => message.role === 'tool').map((message) => message.content);

describe('skills in an agent turn (loopback OpenAI-compatible fake, real SDK)', () => {
  it('lists skills in the system prompt, loads one, saves a new one only once the person confirms, and lists it from the next turn', async () => {
    const kit = await start('openai-chat');
    const { kernel, fake, session } = kit;
    const skillsDir = join(kernel.workspace.root, 'skills');
    await writeTree(skillsDir, { 'meeting-notes/SKILL.md': MEETING });
    fake.reply(
      sse('openai-chat', { calls: [{ id: 'call_load', name: 'skill_load', args: { name: 'meeting-notes' } }] }),
      sse('openai-chat', { calls: [{ id: 'call_save', name: 'skill_save', args: { name: 'weekly-review', content: WEEKLY } }] }),
      sse('openai-chat', { text: 'Saved the weekly-review skill.' }),
      sse('openai-chat', { text: 'Hello again.' }),
    );
    const id = await session();
    let seenBeforeApproval: boolean | undefined;
    const events = await turn(kit, id, 'Take notes and keep a weekly review skill', async (event) => {
      expect((event.data.confirmation as { tool: string; action: string }).action).toBe('save');
      seenBeforeApproval = existsSync(join(skillsDir, 'weekly-review'));
      return true;
    });
    expect(events.at(-1)).toMatchObject({ event: 'done', data: { state: 'finished' } });
    expect(seenBeforeApproval).toBe(false);

    // The first request's prompt lists the skill, name and description only, as untrusted data.
    const first = systemPrompt(fake.posts[0]!.body);
    const listing = /\[tool_output\]\n([\s\S]*?)\n\[\/tool_output\]/.exec(first)?.[1];
    expect(listing).toBe('- meeting-notes: How to write meeting notes. Use when the person asks for minutes.');
    expect(first).not.toContain('Start with the decisions');
    // The loaded body comes back to the model inside the untrusted-data markers.
    const [loaded] = toolMessages(fake.posts[1]!.body);
    expect(loaded).toMatch(/^\[tool_output\]\n[\s\S]*Start with the decisions[\s\S]*\n\[\/tool_output\]$/);
    expect(loaded).toContain('allowed-tools is not applied here');
    // The save was the turn's first write: a snapshot was taken before it ran.
    const names = events.map((event) => event.event);
    expect(names.indexOf('snapshot')).toBeGreaterThan(names.indexOf('confirm'));
    expect(await readFile(join(skillsDir, 'weekly-review/SKILL.md'), 'utf8')).toBe(WEEKLY);
    const turnID = events[0]!.data.turnID as string;
    const records = JSON.parse(await readFile(join(kernel.workspace.root, 'agent/skills.json'), 'utf8')) as { skills: Record<string, { updatedBy: string; lastLoadedAt?: string }> };
    expect(records.skills['weekly-review']!.updatedBy).toMatch(new RegExp(`^agent:${id}/${turnID}/`));
    expect(records.skills['meeting-notes']!.lastLoadedAt).toBeDefined();

    await turn(kit, id, 'hello', async () => true);
    const next = systemPrompt(fake.posts[3]!.body);
    expect(next).toContain('- weekly-review: A weekly review of open tasks. Use on Fridays.');
    expect(next).toContain('- meeting-notes:');
  });

  it('writes nothing when the person declines the save', async () => {
    const kit = await start('openai-chat');
    const { kernel, fake, session } = kit;
    fake.reply(
      sse('openai-chat', { calls: [{ id: 'call_save', name: 'skill_save', args: { name: 'weekly-review', content: WEEKLY } }] }),
      sse('openai-chat', { text: 'Understood.' }),
    );
    const events = await turn(kit, await session(), 'keep a skill', async () => false);
    expect(events.at(-1)).toMatchObject({ event: 'done', data: { state: 'finished' } });
    expect(existsSync(join(kernel.workspace.root, 'skills', 'weekly-review'))).toBe(false);
  });
});
