import { describe, expect, it } from 'vitest';
import { KEY_ENV, callReply, chatWorkspace, documentMarkdown, sse, useChatProcesses } from '../../helpers/chat-workspace.js';
import { CliProcess, STACK_TRACE } from '../../helpers/cli-process.js';
import { useHarness } from '../../helpers/harness.js';

const ALLOW = 'Allow? [y]es once, [a]lways, [n]o: ';

describe('quire chat at a terminal', () => {
  const harness = useHarness();
  const { processes, fakeModel } = useChatProcesses();

  it('sets aside what was typed before a confirmation appeared: a y typed ahead approved a write never shown', async () => {
    const fake = await fakeModel();
    const { root, docId } = await chatWorkspace(harness.boot, `${fake.url}/v1`);
    fake.reply(callReply('block_append', { parentId: docId, markdown: 'typed ahead' }), sse({ text: 'Understood, I left it.' }));
    const chat = CliProcess.startInTerminal(['chat', '--workspace', root], KEY_ENV);
    processes.push(chat);
    await chat.next('> ');
    // Both lines at once, as a person typing on while the agent works.
    chat.type('add a line\ny');
    await chat.next('(a line typed before this question set aside)');
    await chat.next(ALLOW);
    chat.type('n');
    await chat.next('Understood, I left it.');
    await chat.next('> ');
    chat.type('/quit');
    expect(await chat.exited).toBe(0);
    expect(chat.output).not.toMatch(STACK_TRACE);
    expect(await documentMarkdown({ chat }, harness.boot, root, docId)).not.toContain('typed ahead');
  });
});
