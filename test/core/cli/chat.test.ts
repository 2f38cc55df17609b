import Database from 'better-sqlite3';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../../core/cli/run-cli.js';
import type { CliIO } from '../../../core/cli/cli-io.js';
import { ModelWireServer } from '../../../fakes/model-wire-server.js';
import { framesFor } from '../../../fakes/wire-frames.js';
import { useHarness } from '../../helpers/harness.js';

/** A terminal whose typed lines are scripted, and whose output is kept. */
function scriptedTerminal(lines: string[]): CliIO & { text(): string; prompts: string[] } {
  const out: string[] = [];
  const prompts: string[] = [];
  return {
    out: (line) => out.push(`${line}\n`),
    err: (line) => out.push(`${line}\n`),
    write: (text) => out.push(text),
    readLine: async (prompt) => { prompts.push(prompt); return lines.shift(); },
    text: () => out.join(''),
    prompts,
  };
}

describe('quire chat', () => {
  const harness = useHarness();
  const fakes: ModelWireServer[] = [];
  afterEach(async () => {
    for (const fake of fakes.splice(0)) await fake.close();
    delete process.env.QUIRE_CHAT_TEST_KEY;
  });

  /** A new workspace whose model is a loopback fake, and the fake. */
  async function emptyChatWorkspace(): Promise<{ fake: ModelWireServer; root: string }> {
    const fake = await ModelWireServer.start(['chat-model']);
    fakes.push(fake);
    process.env.QUIRE_CHAT_TEST_KEY = 'sk-chat-test';
    const root = join(await harness.tempDir(), 'workspace');
    const setup = await harness.boot({ realManifests: true, workspace: root, config: { plugins: { blocks: { config: { watch: false, welcome: false } } } } });
    await setup.close();
    await writeFile(join(root, 'quire.json'), JSON.stringify({ plugins: { blocks: { config: { welcome: false } }, providers: { config: { model: { provider: 'openai-chat', model: 'chat-model', baseURL: `${fake.url}/v1`, apiKeyEnv: 'QUIRE_CHAT_TEST_KEY' } } } } }));
    return { fake, root };
  }

  it('talks with the agent, asks before its write, shows what happened, and undoes the turn', async () => {
    const fake = await ModelWireServer.start(['chat-model']);
    fakes.push(fake);
    process.env.QUIRE_CHAT_TEST_KEY = 'sk-chat-test';
    const setup = await harness.boot({ realManifests: true, config: { plugins: { blocks: { config: { watch: false, welcome: false } } } } });
    const notebook = await setup.pipeline.call({ target: 'notebook_create', input: { name: 'N' }, principal: { kind: 'person', name: 'x', role: 'admin' } });
    const doc = await setup.pipeline.call({ target: 'document_create', input: { notebook: (notebook as { value: { id: string } }).value.id, title: 'D', markdown: 'first line' }, principal: { kind: 'person', name: 'x', role: 'admin' } });
    const docId = (doc as { value: { id: string } }).value.id;
    const root = setup.workspace.root;
    await setup.close();
    await writeFile(join(root, 'quire.json'), JSON.stringify({ plugins: { blocks: { config: { welcome: false } }, providers: { config: { model: { provider: 'openai-chat', model: 'chat-model', baseURL: `${fake.url}/v1`, apiKeyEnv: 'QUIRE_CHAT_TEST_KEY' } } } } }));
    fake.reply(
      { kind: 'sse', frames: framesFor('openai-chat', { calls: [{ id: 'call_1', name: 'block_append', args: { parentId: docId, markdown: 'from the chat' } }] }) },
      { kind: 'sse', frames: framesFor('openai-chat', { text: 'Added the line.' }) },
    );
    const terminal = scriptedTerminal(['add a line', 'y', '/undo', '1', '/quit']);
    expect(await runCli(['chat', '--workspace', root], terminal)).toBe(0);
    const text = terminal.text();
    expect(text).toContain('→ block_append');
    expect(text).toContain('The agent wants to call block_append (localWrite)');
    expect(terminal.prompts).toContain('Allow? [y]es once, [a]lways, [n]o: ');
    expect(text).toContain('Added the line.');
    expect(text).toMatch(/undone \(restore\)/);

    const after = await harness.boot({ realManifests: true, workspace: root, config: { plugins: { blocks: { config: { watch: false, welcome: false } } } } });
    const markdown = await after.pipeline.call({ target: 'document_get_markdown', input: { id: docId }, principal: { kind: 'person', name: 'x', role: 'admin' } });
    expect((markdown as { value: { markdown: string } }).value.markdown).not.toContain('from the chat');
  });

  it('picks up a note edited by hand while the chat runs (the watcher stays on)', async () => {
    const fake = await ModelWireServer.start(['chat-model']);
    fakes.push(fake);
    process.env.QUIRE_CHAT_TEST_KEY = 'sk-chat-test';
    const setup = await harness.boot({ realManifests: true, config: { plugins: { blocks: { config: { watch: false, welcome: false } } } } });
    const notebook = await setup.pipeline.call({ target: 'notebook_create', input: { name: 'N' }, principal: { kind: 'person', name: 'x', role: 'admin' } });
    const notebookId = (notebook as { value: { id: string } }).value.id;
    const root = setup.workspace.root;
    await setup.close();
    await writeFile(join(root, 'quire.json'), JSON.stringify({ plugins: { blocks: { config: { welcome: false } }, providers: { config: { model: { provider: 'openai-chat', model: 'chat-model', baseURL: `${fake.url}/v1`, apiKeyEnv: 'QUIRE_CHAT_TEST_KEY' } } } } }));
    fake.reply(
      { kind: 'sse', frames: framesFor('openai-chat', { calls: [{ id: 'call_1', name: 'search_fulltext', args: { query: 'walrus' } }] }) },
      { kind: 'sse', frames: framesFor('openai-chat', { text: 'Found it.' }) },
    );
    const lines = ['where is the walrus?', '/quit'];
    const terminal = scriptedTerminal([]);
    terminal.readLine = async (prompt) => {
      terminal.prompts.push(prompt);
      if (lines.length === 2) {
        // Written by hand (another editor) while the chat waits for its first message; the message is typed
        // once the index holds it (read beside the kernel; without the watcher, it never does: 10 s).
        const id = '20250102030405-handmad';
        await writeFile(join(root, 'data', notebookId, `${id}.json`), JSON.stringify({ id, type: 'document', content: 'Zoo', attrs: {}, children: [{ id: '20250102030405-para000', type: 'paragraph', content: 'the walrus sleeps by the pool', attrs: {} }] }));
        const index = new Database(join(root, 'index', 'quire.db'), { readonly: true });
        try {
          for (let i = 0; i < 200 && !index.prepare('SELECT 1 FROM documents WHERE id = ?').get(id); i++) await new Promise((resolve) => setTimeout(resolve, 50));
        } finally {
          index.close();
        }
      }
      return lines.shift();
    };
    expect(await runCli(['chat', '--workspace', root], terminal)).toBe(0);
    // The model's second request carries the search's result: the note written by hand.
    expect(JSON.stringify(fake.posts[1]?.body)).toContain('20250102030405-handmad');
  });

  it('going on with a session, does not ask the questions of a turn that is no longer running', async () => {
    const fake = await ModelWireServer.start(['chat-model']);
    fakes.push(fake);
    process.env.QUIRE_CHAT_TEST_KEY = 'sk-chat-test';
    const setup = await harness.boot({ realManifests: true, config: { plugins: { blocks: { config: { watch: false, welcome: false } } } } });
    const sessionId = '20260101000000-chatses';
    await setup.sessions.save({ id: sessionId, entries: [] });
    const args = { name: 'N' };
    // Left open by a turn a crash ended.
    await setup.confirmations.create({ plugin: 'blocks', tool: 'notebook', action: 'create', wireName: 'notebook_create', arguments: args, argsHash: 'h', effects: ['localWrite'], destructive: false, principal: `agent:${sessionId}/gone/c1`, sessionId, turnId: '20260101000000-goneturn' });
    const root = setup.workspace.root;
    await setup.close();
    await writeFile(join(root, 'quire.json'), JSON.stringify({ plugins: { blocks: { config: { welcome: false } }, providers: { config: { model: { provider: 'openai-chat', model: 'chat-model', baseURL: `${fake.url}/v1`, apiKeyEnv: 'QUIRE_CHAT_TEST_KEY' } } } } }));
    // Nothing typed: the chat ends at its first prompt, which must not be the question's.
    const terminal = scriptedTerminal([]);
    const code = await runCli(['chat', '--workspace', root, '--session', sessionId], terminal);
    expect(code).toBe(0);
    // The kernel expired it at its start (no turn outlives its kernel): nothing is left to ask.
    expect(terminal.text()).not.toContain("this session's turn is waiting for answers");
    expect(JSON.parse(readFileSync(join(root, 'agent', 'confirmations.json'), 'utf8')).confirmations.map((item: { status: string }) => item.status)).toEqual(['expired']);
    expect(terminal.prompts).not.toContain('Allow? [y]es once, [a]lways, [n]o: ');
    expect(existsSync(join(root, 'agent', 'grants.json')) ? JSON.parse(readFileSync(join(root, 'agent', 'grants.json'), 'utf8')).grants : []).toEqual([]);
  });

  it('stops the turn when the input ends at a question (it waited ten minutes, holding the workspace), and shows no control character', async () => {
    const { fake, root } = await emptyChatWorkspace();
    // A note's text or a model's answer may hold escape sequences that conceal or overwrite what follows.
    fake.reply(
      { kind: 'sse', frames: framesFor('openai-chat', { text: 'Looking\u001b[8m hidden\r\u009b2J.', calls: [{ id: 'call_1', name: 'question', args: { questions: [{ question: 'Which colour\u001b[1A? \u202etxt.exe 会議', options: [{ label: 'Blue' }, { label: 'Green' }] }] } }] }) },
    );
    const terminal = scriptedTerminal(['ask me']);
    // On the code before, the chat waited here for the confirmation limit (the test timed out).
    expect(await runCli(['chat', '--workspace', root], terminal)).toBe(0);
    const text = terminal.text();
    expect(text).toContain('(the input ended: the turn is stopped)');
    expect(text).toContain('Looking\ufffd[8m hidden\n\ufffd2J.');
    expect(text).toContain('Which colour\ufffd[1A? \ufffdtxt.exe 会議');
    expect(text).not.toMatch(/[\u001b\u009b\r\u202e]/);
  });

  it('says a turn stopped before it answered as that, not that its answer is kept', async () => {
    const { fake, root } = await emptyChatWorkspace();
    fake.reply({ kind: 'sse', frames: framesFor('openai-chat', { calls: [{ id: 'call_1', name: 'question', args: { questions: [{ question: 'Which?', options: [{ label: 'A' }, { label: 'B' }] }] } }] }) });
    const terminal = scriptedTerminal(['ask me']);
    expect(await runCli(['chat', '--workspace', root], terminal)).toBe(0);
    expect(terminal.text()).toContain('(the turn stopped before it answered)');
    expect(terminal.text()).not.toContain('its answer so far is kept');
  });

  it('tells the agent no when the person says no, and the chat goes on', async () => {
    const { fake, root } = await emptyChatWorkspace();
    fake.reply(
      { kind: 'sse', frames: framesFor('openai-chat', { calls: [{ id: 'call_1', name: 'notebook_create', args: { name: 'Uninvited' } }] }) },
      { kind: 'sse', frames: framesFor('openai-chat', { text: 'Understood, I did not create it.' }) },
    );
    const terminal = scriptedTerminal(['make a notebook', 'n']);
    expect(await runCli(['chat', '--workspace', root], terminal)).toBe(0);
    expect(terminal.text()).toContain('✗');
    expect(terminal.text()).toContain('Understood, I did not create it.');
    const toolMessage = (fake.posts[1]!.body.messages as { role: string; content: string }[]).find((message) => message.role === 'tool')!;
    expect(toolMessage.content).toMatch(/denied|declined|not approved/i);
  });

  it('says what to configure when no model is set, before the first message', async () => {
    const root = join(await harness.tempDir(), 'workspace');
    await mkdir(root);
    const terminal = scriptedTerminal(['hello']);
    expect(await runCli(['chat', '--workspace', root], terminal)).toBe(1);
    expect(terminal.text()).toContain('MODEL_UNAVAILABLE: no model is configured: set plugins.providers.config.model');
  });

  it('opens no workspace at a path where there is none (a mistyped path), and makes none', async () => {
    const root = join(await harness.tempDir(), 'notse');
    for (const command of [['chat'], ['notebooks']]) {
      const terminal = scriptedTerminal([]);
      expect(await runCli([...command, '--workspace', root], terminal)).toBe(1);
      expect(terminal.text()).toContain(`there is no workspace at ${root}`);
    }
    expect(existsSync(root)).toBe(false);
  });
});
