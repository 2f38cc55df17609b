import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { newId } from '../../../core/ids.js';
import { RESULT_UNKNOWN } from '../../../core/session/session-types.js';
import { REPO_ROOT, useHarness, writeUserPlugin } from '../../helpers/harness.js';

const DIST = join(REPO_ROOT, 'dist', 'core');

/** A trusted user plugin whose action leaves a marker and then never finishes. */
const HANGING_PLUGIN = {
  manifest: {
    id: 'hang', version: '1.0.0', kernel: '^0.1.0', description: 'hangs', entry: 'index.js',
    tools: [{ name: 'hang', description: 'hangs', actions: { forever: { description: 'never returns', input: { type: 'object', properties: {}, additionalProperties: false }, effects: [] } } }],
  },
  code: `import { writeFileSync } from 'node:fs';
export default { activate(ctx) { return { hang: { forever: () => { writeFileSync(process.env.QUIRE_MARKER, 'started'); return new Promise(() => {}); } } }; } };`,
};

function childScript(workspace: string, sessionId: string, call: { name: string; args: string } = { name: 'hang_forever', args: '{}' }): string {
  return `
    // Alive until killed: every timer of the kernel is unref'd, so a turn waiting on a promise that never
    // settles ended the process by itself (exit 13) before the test's kill, whose 'exit' then never came.
    setInterval(() => {}, 1 << 30);
    const { Kernel } = await import(${JSON.stringify(join(DIST, 'kernel.js'))});
    const { silentLogger } = await import(${JSON.stringify(join(DIST, 'log.js'))});
    const { turnDependencies } = await import(${JSON.stringify(join(DIST, 'turn', 'kernel-turns.js'))});
    const { runTurn } = await import(${JSON.stringify(join(DIST, 'turn', 'turn-loop.js'))});
    const kernel = await Kernel.boot({ workspace: ${JSON.stringify(workspace)}, config: { plugins: { hang: { trusted: true }, blocks: { config: { watch: false } } } }, logger: silentLogger });
    let round = 0;
    const provider = { id: 'script', async *stream() {
      round++;
      if (round === 1) {
        yield { type: 'tool_call_start', index: 0, id: 'c1', name: ${JSON.stringify(call.name)} };
        yield { type: 'tool_call_delta', index: 0, argumentsDelta: ${JSON.stringify(call.args)} };
        yield { type: 'tool_call_end', index: 0 };
        yield { type: 'finish', reason: 'tool_calls' };
      }
    } };
    await runTurn(turnDependencies(kernel, { requireSnapshot: false }), { sessionId: ${JSON.stringify(sessionId)}, message: 'do the long thing', provider, systemPrompt: () => '', signal: new AbortController().signal }, () => {});
  `;
}

/** A kernel whose model streams an answer a word every 50 ms and never ends it. */
function streamingChild(workspace: string, sessionId: string): string {
  return `
    // Alive until killed: every timer of the kernel is unref'd, so a turn waiting on a promise that never
    // settles ended the process by itself (exit 13) before the test's kill, whose 'exit' then never came.
    setInterval(() => {}, 1 << 30);
    const { Kernel } = await import(${JSON.stringify(join(DIST, 'kernel.js'))});
    const { silentLogger } = await import(${JSON.stringify(join(DIST, 'log.js'))});
    const { turnDependencies } = await import(${JSON.stringify(join(DIST, 'turn', 'kernel-turns.js'))});
    const { runTurn } = await import(${JSON.stringify(join(DIST, 'turn', 'turn-loop.js'))});
    const kernel = await Kernel.boot({ workspace: ${JSON.stringify(workspace)}, config: { plugins: { blocks: { config: { watch: false } } } }, logger: silentLogger });
    const provider = { id: 'script', async *stream() {
      for (let i = 0; ; i++) {
        yield { type: 'text', delta: 'word' + i + ' ' };
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } };
    await runTurn(turnDependencies(kernel, { requireSnapshot: false, idleTimeoutMs: 60000 }), { sessionId: ${JSON.stringify(sessionId)}, message: 'tell me a long story', provider, systemPrompt: () => '', signal: new AbortController().signal }, () => {});
  `;
}

/** A kernel process to be killed: its exit watched from its start, and killed at the end whatever happened. */
function startChild(script: string, env: NodeJS.ProcessEnv = {}): { child: ReturnType<typeof spawn>; exited: Promise<[number | null, NodeJS.Signals | null]>; alive(): boolean } {
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once('exit', (code, signal) => resolve([code, signal])));
  children.push(child);
  return { child, exited, alive: () => child.exitCode === null && child.signalCode === null };
}

const children: ReturnType<typeof spawn>[] = [];

describe('a kernel killed in the middle of a tool call', () => {
  afterEach(() => { for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL'); });
  const { boot, tempDir } = useHarness();

  it('leaves a session that reads, with the turn interrupted and the call marked result-unknown', async () => {
    const workspace = join(await tempDir(), 'ws');
    await writeUserPlugin(workspace, 'hang', HANGING_PLUGIN);
    const sessionId = newId();
    const first = await boot({ workspace, realManifests: true, config: { plugins: { hang: { trusted: true } } } });
    await first.sessions.save({ id: sessionId, title: 'Crash', entries: [{ id: 'u0', type: 'user', content: 'earlier question' }, { id: 'a0', type: 'assistant', content: 'earlier answer' }] });
    await first.close();
    const marker = join(await tempDir(), 'started');
    const { child, exited, alive } = startChild(childScript(workspace, sessionId), { QUIRE_MARKER: marker });
    for (let i = 0; i < 300 && !existsSync(marker) && alive(); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(existsSync(marker)).toBe(true);
    child.kill('SIGKILL');
    expect(await exited).toEqual([null, 'SIGKILL']);
    const again = await boot({ workspace, realManifests: true, config: { plugins: { hang: { trusted: true } } } });
    const session = await again.sessions.read(sessionId);
    expect(session.recoveryState).toBe('interrupted');
    expect(session.entries.slice(0, 3).map((entry) => [entry.type, entry.content])).toEqual([['user', 'earlier question'], ['assistant', 'earlier answer'], ['user', 'do the long thing']]);
    const calls = session.entries.flatMap((entry) => entry.toolCalls ?? []);
    expect(calls.map((call) => [call.id, call.state, call.result])).toEqual([['c1', 'unknown', RESULT_UNKNOWN]]);
    // The interrupted turn can be committed, and then the session is whole again.
    const committed = await again.sessions.save({ id: sessionId, entries: (await again.sessions.read(sessionId)).entries.slice(0, 3), commitTurnID: String(session.recoveryTurnID) });
    expect(committed.session.entries.flatMap((entry) => entry.toolCalls ?? []).map((call) => call.state)).toEqual(['unknown']);
  });

  it('settles the confirmation the killed turn waited on: it cannot be approved after the restart, nor make a grant', async () => {
    const workspace = join(await tempDir(), 'ws');
    await writeUserPlugin(workspace, 'hang', HANGING_PLUGIN);
    const sessionId = newId();
    const first = await boot({ workspace, realManifests: true, config: { plugins: { hang: { trusted: true } } } });
    await first.sessions.save({ id: sessionId, title: 'Crash at a question', entries: [] });
    await first.close();
    const { child, exited, alive } = startChild(childScript(workspace, sessionId, { name: 'notebook_create', args: '{"name":"Asked for"}' }));
    const confirmations = join(workspace, 'agent', 'confirmations.json');
    const pending = (): boolean => { try { return readFileSync(confirmations, 'utf8').includes('"pending"'); } catch { return false; } };
    for (let i = 0; i < 300 && !pending() && alive(); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(pending()).toBe(true);
    child.kill('SIGKILL');
    expect(await exited).toEqual([null, 'SIGKILL']);

    const again = await boot({ workspace, realManifests: true, config: { plugins: { hang: { trusted: true } } } });
    expect((await again.sessions.read(sessionId)).recoveryState).toBe('interrupted');
    expect(again.confirmations.list({ status: 'pending' })).toEqual([]);
    const [left] = again.confirmations.list({ sessionId });
    expect(left?.status).toBe('expired');
    await expect(again.confirmations.answer(left!.id, { approved: true, always: true, argsHash: left!.argsHash, answeredBy: 'person' })).rejects.toMatchObject({ code: 'CONFIRMATION_ALREADY_ANSWERED' });
    expect(again.grants.list()).toEqual([]);
    // Settled on disk too: a second restart finds it expired, not pending.
    expect(readFileSync(confirmations, 'utf8')).not.toContain('"pending"');
  });

  it('keeps the answer streamed so far as the turn\'s draft (saved at most once a second)', async () => {
    const workspace = join(await tempDir(), 'ws');
    const sessionId = newId();
    const first = await boot({ workspace });
    await first.sessions.save({ id: sessionId, title: 'Story', entries: [] });
    await first.close();
    const { child, exited, alive } = startChild(streamingChild(workspace, sessionId));
    // Killed once a draft with some words is on disk (in runtime.json or its journal).
    const folder = join(workspace, 'agent', 'sessions', sessionId);
    const saved = (): string => ['runtime.json', 'runtime.journal.jsonl'].map((name) => { try { return readFileSync(join(folder, name), 'utf8'); } catch { return ''; } }).join('');
    for (let i = 0; i < 300 && !/"draftContent":\s*"word0 word1 word2/.test(saved()) && alive(); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    child.kill('SIGKILL');
    expect(await exited).toEqual([null, 'SIGKILL']);
    const again = await boot({ workspace });
    const session = await again.sessions.read(sessionId);
    expect(session.recoveryState).toBe('interrupted');
    const draft = session.entries.find((entry) => entry.id.startsWith('runtime_draft_'));
    expect(draft?.content).toMatch(/^word0 word1 word2 /);
  });
});
