import { createHmac } from 'node:crypto';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ModelWireServer } from '../../../fakes/model-wire-server.js';
import { KEY_ENV, adminJson, callReply, chatWorkspace, sse, startChat } from '../../helpers/chat-workspace.js';
import { CLI, CliProcess, STACK_TRACE, startServe } from '../../helpers/cli-process.js';
import { useHarness } from '../../helpers/harness.js';

/** A loopback port nothing listens on (taken, then freed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The pid of a process that has ended. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => child.on('exit', resolve));
  return child.pid!;
}

describe('quire chat beside quire serve', () => {
  const harness = useHarness();
  const processes: CliProcess[] = [];
  const fakes: ModelWireServer[] = [];
  afterEach(async () => {
    // Gone before the harness removes their folders (after-hooks run last registered first).
    await Promise.all(processes.splice(0).map((child) => { child.kill(); return child.exited; }));
    for (const fake of fakes.splice(0)) await fake.close();
  });

  it('talks to the running kernel over HTTP through a full turn with a confirmation', async () => {
    expect(existsSync(CLI), 'run `npm run build` first').toBe(true);
    const fake = await ModelWireServer.start(['chat-model']);
    fakes.push(fake);
    const { root, docId } = await chatWorkspace(harness.boot, `${fake.url}/v1`);
    fake.reply(callReply('block_append', { parentId: docId, markdown: 'from the chat' }), sse({ text: 'Added the line.' }));
    const { chat, serve } = await startChat(root, 'over HTTP', processes);
    const sessionId = (await chat.next(/Session (\S+)/))[1]!;
    expect(chat.output).toContain(serve!.url);
    await chat.next('> ');
    chat.type('add a line');
    await chat.next('The agent wants to call block_append (localWrite)');
    await chat.next('Allow? [y]es once, [a]lways, [n]o: ');
    chat.type('y');
    await chat.next('Added the line.');
    await chat.next('> ');
    chat.type('/quit');
    expect(await chat.exited).toBe(0);
    expect(chat.output).not.toMatch(STACK_TRACE);

    // The serving kernel ran the turn: the session and the note are its own.
    const { session } = await adminJson<{ session: { entries: { type: string; content?: string }[] } }>(serve!.url, serve!.token, 'GET', `/api/agent/sessions/${sessionId}`);
    expect(session.entries.find((entry) => entry.type === 'user')?.content).toBe('add a line');
    const markdown = await adminJson<{ result: { markdown: string } }>(serve!.url, serve!.token, 'POST', '/api/actions/blocks/document/get_markdown', { id: docId });
    expect(markdown.result.markdown).toContain('from the chat');
    expect(fake.posts).toHaveLength(2);
  });

  /** A chat beside `quire serve`, at its prompt, the kernel then stopped and started again (at another port). */
  async function restartedUnderChat() {
    const fake = await ModelWireServer.start(['chat-model']);
    fakes.push(fake);
    const { root } = await chatWorkspace(harness.boot, `${fake.url}/v1`);
    const { chat, serve } = await startChat(root, 'over HTTP', processes);
    const sessionId = (await chat.next(/Session (\S+)/))[1]!;
    await chat.next('> ');
    expect(await serve!.process.stop()).toBe(0);
    const again = await startServe(root, KEY_ENV);
    processes.push(again.process);
    return { chat, serve: serve!, again, sessionId, fake };
  }

  it('goes on with a kernel started again at another address, and ends saying how to go on when none serves (it kept prompting)', async () => {
    const { chat, again, sessionId, fake } = await restartedUnderChat();
    chat.type('are you there?');
    await chat.next(`(the workspace's kernel was started again, at ${again.url}: the chat goes on there; your message did not reach it and was not sent: type it again)`);
    fake.reply(sse({ text: 'Here, on the new kernel.' }));
    await chat.next('> ');
    chat.type('hello again');
    await chat.next('Here, on the new kernel.');
    await chat.next('> ');
    expect(await again.process.stop()).toBe(0);
    chat.type('and now?');
    expect(await chat.exited).toBe(1);
    expect(chat.output).toContain(`the kernel at ${again.url} has stopped; session ${sessionId} is kept: \`quire chat --session ${sessionId}\` goes on with it`);
    expect(chat.output).not.toMatch(STACK_TRACE);
  });

  it('ends when the kernel started again has no such session (deleted meanwhile), instead of failing each message', async () => {
    const { chat, serve, again, sessionId } = await restartedUnderChat();
    const deleted = await fetch(`${again.url}/api/agent/sessions/${sessionId}`, { method: 'DELETE', headers: { authorization: `Bearer ${serve.token}` } });
    expect(deleted.ok).toBe(true);
    chat.type('still there?');
    expect(await chat.exited).toBe(1);
    expect(chat.output).toContain(`the kernel started again at ${again.url} has no session ${sessionId}; session ${sessionId} is kept`);
  });

  it("stops its turn on the serving kernel when it is ended by SIGTERM or SIGHUP (the turn waited there at a confirmation)", async () => {
    for (const signal of ['SIGTERM', 'SIGHUP'] as const) {
      const fake = await ModelWireServer.start(['chat-model']);
      fakes.push(fake);
      const { root, docId } = await chatWorkspace(harness.boot, `${fake.url}/v1`);
      fake.reply(callReply('block_append', { parentId: docId, markdown: 'never asked for' }));
      const { chat, serve } = await startChat(root, 'over HTTP', processes);
      const sessionId = (await chat.next(/Session (\S+)/))[1]!;
      await chat.next('> ');
      chat.type('add a line');
      await chat.next('Allow? [y]es once, [a]lways, [n]o: ');
      chat.child.kill(signal);
      expect(await chat.exited).toBe(signal === 'SIGTERM' ? 143 : 129);
      // Cancelled before the process ended: the confirmation stops waiting as the turn ends, within
      // moments (without the cancel it waited ten minutes).
      const waiting = async () => (await adminJson<{ confirmations: unknown[] }>(serve!.url, serve!.token, 'GET', `/api/agent/sessions/${sessionId}/pending`)).confirmations.length;
      for (let tries = 0; (await waiting()) > 0 && tries < 100; tries++) await new Promise((resolve) => setTimeout(resolve, 50));
      expect([signal, await waiting()]).toEqual([signal, 0]);
    }
  });

  it("leaves another client's turn in its session running when it is ended while idle", async () => {
    const fake = await ModelWireServer.start(['chat-model']);
    fakes.push(fake);
    const { root, docId } = await chatWorkspace(harness.boot, `${fake.url}/v1`);
    fake.reply(callReply('block_append', { parentId: docId, markdown: 'the web app asked for this' }));
    const { chat, serve } = await startChat(root, 'over HTTP', processes);
    const sessionId = (await chat.next(/Session (\S+)/))[1]!;
    await chat.next('> ');
    // Another client (the web app) runs a turn in the same session; it waits at its confirmation.
    const stream = fetch(`${serve!.url}/api/agent/sessions/${sessionId}/turns`, { method: 'POST', headers: { authorization: `Bearer ${serve!.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ message: 'add a line' }) });
    const waiting = async () => (await adminJson<{ confirmations: unknown[] }>(serve!.url, serve!.token, 'GET', `/api/agent/sessions/${sessionId}/pending`)).confirmations.length;
    for (let tries = 0; (await waiting()) === 0 && tries < 200; tries++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await waiting()).toBe(1);
    chat.child.kill('SIGTERM');
    expect(await chat.exited).toBe(143);
    expect(await waiting()).toBe(1);
    await adminJson(serve!.url, serve!.token, 'POST', `/api/agent/sessions/${sessionId}/turns/cancel`, {});
    await (await stream).text();
  });

  it('finds the serving kernel in .quire/serve.json (mode 0600), which a clean stop removes', async () => {
    const root = join(await harness.tempDir(), 'workspace');
    const serve = await startServe(root);
    processes.push(serve.process);
    const file = join(root, '.quire', 'serve.json');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const record = JSON.parse(await readFile(file, 'utf8')) as { instance: string; key: string };
    expect(record).toEqual({ url: serve.url, pid: serve.process.child.pid, instance: expect.any(String), key: expect.any(String) });
    // The record names this boot, which its /healthz answers, and holds its key, which /healthz proves by a challenge.
    const challenge = 'a-challenge-of-this-client';
    const health = await (await fetch(`${serve.url}/healthz?challenge=${challenge}`)).json() as { instance: string; proof: string };
    expect(health).toMatchObject({ instance: record.instance, proof: createHmac('sha256', record.key).update(challenge).digest('base64url') });
    expect(await serve.process.stop()).toBe(0);
    expect(existsSync(file)).toBe(false);
  });

  it('opens the workspace itself when serve.json is stale: its process gone, not answering, or another server there', async () => {
    const fake = await ModelWireServer.start(['chat-model']);
    fakes.push(fake);
    const { root } = await chatWorkspace(harness.boot, `${fake.url}/v1`);
    const file = join(root, '.quire', 'serve.json');
    const url = `http://127.0.0.1:${await closedPort()}`;
    // Another kernel now listening where the crashed one did (its pid reused by a live process): it answers
    // /healthz, but as another boot, and must not get this workspace's token.
    const other = createHttpServer((_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, instance: 'another-boot' })));
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    // One that learnt the crashed kernel's instance from its public /healthz and replays it, without its key.
    const replaying = createHttpServer((_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, instance: 'this-boot', proof: 'guessed' })));
    await new Promise<void>((resolve) => replaying.listen(0, '127.0.0.1', resolve));
    const replayingUrl = `http://127.0.0.1:${(replaying.address() as AddressInfo).port}`;
    const key = 'the-crashed-boot-key';
    const records = [{ url, pid: await deadPid(), instance: 'a', key }, { url, pid: process.pid, instance: 'a', key }, { url: otherUrl, pid: process.pid, instance: 'this-boot', key },
      { url: replayingUrl, pid: process.pid, instance: 'this-boot', key }];
    try {
      for (const record of records) {
        await writeFile(file, JSON.stringify(record), { mode: 0o600 });
        const chat = CliProcess.start(['chat', '--workspace', root], { QUIRE_CHAT_TEST_KEY: 'sk-chat-test' });
        processes.push(chat);
        await chat.next(/Session \S+ \(this process opened the workspace\)/);
        chat.endInput();
        expect(await chat.exited).toBe(0);
        expect(chat.output).not.toContain(record.url);
      }
    } finally {
      for (const server of [other, replaying]) {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    }
  });
});
