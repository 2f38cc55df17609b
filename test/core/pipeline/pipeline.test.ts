import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import type { Principal } from '../../../core/plugin-api.js';
import type { AuditRecord } from '../../../core/audit/audit-record.js';
import { KernelError } from '../../../core/errors.js';
import { caught, useHarness, type UserPlugin } from '../../helpers/harness.js';
import { connectMcp } from '../../helpers/mcp-client.js';
import { createHttpApp } from '../../../core/http/app.js';
import { startHttpServer } from '../../../core/http/serve.js';

const agent: Principal = { kind: 'agent', name: 'agent:s1/t1/c1', role: 'admin', sessionId: 's1', turnId: 't1' };
const admin: Principal = { kind: 'person', name: 'admin', role: 'admin' };
const reader: Principal = { kind: 'person', name: 'viewer', role: 'reader' };

/** A user plugin mirroring the notes fixture's shape, in plain JavaScript from the workspace folder. */
function userNotes(effectsOfPut: string[]): UserPlugin {
  return {
    manifest: {
      id: 'user-notes', version: '0.2.0', kernel: '^0.1.0', description: 'user plugin', entry: 'main.js',
      tools: [{ name: 'memo', description: 'memos', actions: {
        read: { description: 'read', input: { type: 'object' }, effects: [] },
        save: { description: 'save', input: { type: 'object', required: ['text'], properties: { text: { type: 'string' } } }, effects: effectsOfPut },
        slow: { description: 'slow', input: { type: 'object' }, effects: [] },
        stuck: { description: 'never ends, never looks at its signal', input: { type: 'object' }, effects: [] },
        late: { description: 'ends 300 ms later, never looks at its signal', input: { type: 'object' }, effects: ['localWrite'] },
        boom: { description: 'throws', input: { type: 'object' }, effects: ['localWrite'] },
        missing: { description: 'reads a file that is not there', input: { type: 'object' }, effects: [] },
        secret: { description: 'agent only', input: { type: 'object' }, effects: [], agentOnly: true },
        odd: { description: 'a result JSON cannot carry', input: { type: 'object', properties: { kind: { type: 'string' } } }, effects: [] },
        shaped: { description: 'output schema', input: { type: 'object' }, effects: [], output: { type: 'object', required: ['n'], properties: { n: { type: 'number' } } } },
      } }],
    },
    entry: 'main.js',
    code: `import { readFileSync } from 'node:fs';
export default {
  activate(ctx) {
    const saved = [];
    return { memo: {
      read: () => ({ saved }),
      save: (input) => { saved.push(input.text); return { count: saved.length }; },
      slow: (_input, call) => new Promise((resolve) => call.signal.addEventListener('abort', () => resolve({ stopped: true }))),
      stuck: () => new Promise(() => undefined),
      late: () => new Promise((resolve) => setTimeout(() => resolve({ late: true }), 300)),
      boom: () => { throw new Error('disk on fire'); },
      missing: () => readFileSync('/home/somebody/private-notes/workspace/data/file.json'),
      secret: () => ({ secret: 42 }),
      shaped: () => ({ n: 'not a number' }),
      odd: (input) => {
        const cycle = { name: 'loop' };
        cycle.self = cycle;
        let shared = { leaf: true };
        for (let depth = 0; depth < 60; depth++) shared = { a: shared, b: shared };
        return { shared, bigint: { n: 10n }, fn: { list: [1, () => 2] }, map: { found: new Map([['a', 1]]) }, nan: { ratio: 0 / 0 }, cycle: { cycle }, date: { when: new Date(0), gone: undefined } }[input.kind];
      },
    } };
  },
};
`,
  };
}

async function auditLines(file: string): Promise<AuditRecord[]> {
  return (await readFile(file, 'utf8')).trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as AuditRecord);
}

describe('action pipeline', () => {
  const harness = useHarness();

  it('rejects invalid input naming the JSON pointer, before the handler runs', async () => {
    const kernel = await harness.boot({ plugins: ['notes'] });
    const error = await caught(kernel.pipeline.call({ target: 'note_put', input: { name: 'Bad Name!', text: 3 }, principal: admin }));
    expect(error.code).toBe('INVALID_INPUT');
    const pointers = (error.details?.issues as { pointer: string }[]).map((issue) => issue.pointer);
    expect(pointers).toEqual(expect.arrayContaining(['/name', '/text']));
    expect((await caught(kernel.pipeline.call({ target: 'note_put', input: [1], principal: admin }))).code).toBe('INVALID_INPUT');
  });

  it('applies schema defaults for the handler without changing the caller\'s input object', async () => {
    const kernel = await harness.boot({ plugins: ['notes'] });
    const input = { name: 'a', text: 'x' };
    const outcome = await kernel.pipeline.call({ target: 'note_put', input, principal: admin });
    expect(outcome.status === 'ok' && outcome.value).toMatchObject({ format: 'text' });
    expect(input).toEqual({ name: 'a', text: 'x' });
  });

  it('lets a reader call actions without effects only', async () => {
    const kernel = await harness.boot({ plugins: ['notes'] });
    expect((await caught(kernel.pipeline.call({ target: 'note_put', input: { name: 'a', text: 'x' }, principal: reader }))).code).toBe('FORBIDDEN');
    await kernel.pipeline.call({ target: 'note_put', input: { name: 'a', text: 'x' }, principal: admin });
    const read = await kernel.pipeline.call({ target: 'note_get', input: { name: 'a' }, principal: reader });
    expect(read.status === 'ok' && read.value).toEqual({ name: 'a', text: 'x' });
  });

  it('refuses every action with an effect in a read-only workspace, from every caller', async () => {
    const kernel = await harness.boot({ plugins: ['notes'], config: { readOnly: true } });
    for (const principal of [admin, agent]) {
      expect((await caught(kernel.pipeline.call({ target: 'note_put', input: { name: 'a', text: 'x' }, principal }))).code).toBe('WORKSPACE_READ_ONLY');
    }
    expect((await caught(kernel.pipeline.call({ target: 'note_get', input: { name: 'a' }, principal: admin }))).code).toBe('NOT_FOUND');
  });

  it('denies an agent call matching a deny rule, but not a person\'s own call', async () => {
    const kernel = await harness.boot({ plugins: ['notes'], config: { gate: { deny: [{ tool: 'note', action: 'delete' }] } } });
    expect((await caught(kernel.pipeline.call({ target: 'note_delete', input: { name: 'a' }, principal: agent }))).code).toBe('ACTION_DENIED');
    expect((await kernel.pipeline.call({ target: 'note_delete', input: { name: 'a' }, principal: admin })).status).toBe('ok');
  });

  it('runs agent reads and auto-mode writes without asking; forbidding auto mode brings the question back', async () => {
    const kernel = await harness.boot({ plugins: ['notes'] });
    expect((await kernel.pipeline.call({ target: 'note_put', input: { name: 'a', text: 'x' }, principal: agent, sessionMode: 'auto' })).status).toBe('ok');
    expect((await kernel.pipeline.call({ target: 'note_get', input: { name: 'a' }, principal: agent })).status).toBe('ok');
    const strict = await harness.boot({ plugins: ['notes'], config: { gate: { allowAutoMode: false } } });
    expect((await strict.pipeline.call({ target: 'note_put', input: { name: 'a', text: 'x' }, principal: agent, sessionMode: 'auto' })).status).toBe('confirmation_required');
  });

  it('audits every action with an effect, from any caller, with outcome and the grant used', async () => {
    const kernel = await harness.boot({ plugins: ['notes'] });
    await kernel.pipeline.call({ target: 'note_put', input: { name: 'a', text: 'x' }, principal: admin });
    await kernel.pipeline.call({ target: 'note_get', input: { name: 'a' }, principal: admin });
    await kernel.pipeline.call({ target: 'note_put', input: { name: 'b', text: 'y' }, principal: agent, sessionMode: 'auto' });
    const lines = await auditLines(kernel.audit.logFile);
    expect(lines.map((line) => [line.principal.kind, line.tool, line.action, line.outcome])).toEqual([
      ['person', 'note', 'put', 'ok'], ['agent', 'note', 'put', 'ok'],
    ]);
    expect(lines[1]?.principal).toMatchObject({ sessionId: 's1', turnId: 't1' });
    expect(lines[0]?.argsHash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(lines)).not.toContain('"text"');
  });

  it('says a call ran, and not to repeat it, when only its audit line could not be written', async () => {
    const kernel = await harness.boot({ plugins: ['notes'] });
    const append = kernel.audit.append.bind(kernel.audit);
    kernel.audit.append = () => Promise.reject(new KernelError('DISK_FULL', 'no space left: 1 line(s) not written; free some space and try again', { details: { what: 'audit log' } }));
    const error = await caught(kernel.pipeline.call({ target: 'note_put', input: { name: 'kept', text: 'written' }, principal: admin }));
    expect(error).toMatchObject({ code: 'DISK_FULL', details: { ran: true, what: 'audit log' } });
    expect(error.details).not.toHaveProperty('result');
    expect(error.message).toMatch(/ran and took effect.*do not repeat it/);
    const read = await kernel.pipeline.call({ target: 'note_get', input: { name: 'kept' }, principal: admin });
    expect(read.status === 'ok' && read.value).toEqual({ name: 'kept', text: 'written' });
    kernel.audit.append = append;
  });

  it('audits a refusal repeated in a loop once a minute per caller and action, not once per request', async () => {
    const kernel = await harness.boot({ plugins: ['notes'] });
    for (let i = 0; i < 200; i++) await caught(kernel.pipeline.call({ target: 'note_put', input: { name: 'a', text: 'x' }, principal: reader }));
    await caught(kernel.pipeline.call({ target: 'note_delete', input: { name: 'a' }, principal: reader }));
    const lines = (await auditLines(kernel.audit.logFile)).filter((line) => line.outcome === 'refused');
    expect(lines.map((line) => [line.action, line.errorCode])).toEqual([['put', 'FORBIDDEN'], ['delete', 'FORBIDDEN']]);
  });

  it('audits calls with effects that were refused before they ran', async () => {
    const kernel = await harness.boot({ plugins: ['notes'], config: { gate: { deny: [{ tool: 'note', action: 'delete' }] } } });
    await caught(kernel.pipeline.call({ target: 'note_put', input: { name: 'a', text: 'x' }, principal: reader }));
    await caught(kernel.pipeline.call({ target: 'note_delete', input: { name: 'a' }, principal: agent }));
    await caught(kernel.pipeline.call({ target: 'note_get', input: { name: 'a' }, principal: reader }));
    const lines = await auditLines(kernel.audit.logFile);
    expect(lines.map((line) => [line.principal.name, line.action, line.outcome, line.errorCode])).toEqual([
      ['viewer', 'put', 'refused', 'FORBIDDEN'], ['agent:s1/t1/c1', 'delete', 'refused', 'ACTION_DENIED'],
    ]);
  });

  it('sends an untrusted user plugin through the same gate as a native one, and trusts it when told', async () => {
    const untrusted = await harness.boot({ plugins: ['notes'], userPlugins: { 'user-notes': userNotes([]) } });
    const entry = untrusted.registry.get('memo_save');
    expect(entry?.source).toBe('user');
    expect(entry?.effects).toEqual(['localWrite', 'dataEgress', 'externalCost']);
    expect((await untrusted.pipeline.call({ target: 'memo_save', input: { text: 'x' }, principal: agent })).status).toBe('confirmation_required');
    expect((await untrusted.pipeline.call({ target: 'note_put', input: { name: 'a', text: 'x' }, principal: agent })).status).toBe('confirmation_required');
    const refused = await caught(untrusted.pipeline.call({ target: 'memo_read', input: {}, principal: reader }));
    // Said why: the action declares none, and an untrusted plugin's silence counts as every effect.
    expect([refused.code, refused.message]).toEqual(['FORBIDDEN', expect.stringContaining(`plugin 'user-notes' declares no effects, which counts as every effect while it is untrusted; mark it "trusted": true`)]);

    const trusted = await harness.boot({ userPlugins: { 'user-notes': userNotes([]) }, config: { plugins: { 'user-notes': { trusted: true } } } });
    expect((await trusted.pipeline.call({ target: 'memo_save', input: { text: 'x' }, principal: agent })).status).toBe('ok');

    const declared = await harness.boot({ userPlugins: { 'user-notes': userNotes(['localWrite']) } });
    const outcome = await declared.pipeline.call({ target: 'memo_save', input: { text: 'x' }, principal: agent });
    expect(outcome.status === 'confirmation_required' && outcome.confirmation.effects).toEqual(['localWrite']);
  });

  it('wraps what a handler throws with the plugin id and audits the failure', async () => {
    const kernel = await harness.boot({ userPlugins: { 'user-notes': userNotes(['localWrite']) }, config: { plugins: { 'user-notes': { trusted: true } } } });
    const error = await caught(kernel.pipeline.call({ target: 'memo_boom', input: {}, principal: admin }));
    expect(error.code).toBe('PLUGIN_ERROR');
    expect(error.message).toContain('user-notes');
    expect(error.message).toContain('disk on fire');
    expect((await auditLines(kernel.audit.logFile)).at(-1)).toMatchObject({ action: 'boom', outcome: 'error', errorCode: 'PLUGIN_ERROR' });
    // A system error names its file by the last part of its path only (the whole path reached the caller, an agent's model too).
    const missing = await caught(kernel.pipeline.call({ target: 'memo_missing', input: {}, principal: admin }));
    expect([missing.code, missing.message, missing.details?.errorCode]).toEqual(['PLUGIN_ERROR', expect.stringContaining("open '…/file.json'"), 'ENOENT']);
    expect(missing.message).not.toContain('private-notes');
  });

  it('audits a call answered as still running at its time limit as such, and what it did once it ends after all', async () => {
    const kernel = await harness.boot({ userPlugins: { 'user-notes': userNotes([]) }, config: { plugins: { 'user-notes': { trusted: true } }, actions: { timeoutMs: 50 } } });
    const error = await caught(kernel.pipeline.call({ target: 'memo_late', input: {}, principal: admin }));
    expect(error).toMatchObject({ code: 'ACTION_TIMEOUT', details: { stillRunning: true } });
    const lines = async () => (await auditLines(kernel.audit.logFile)).filter((line) => line.action === 'late');
    // Waited for (the handler ends 300 ms after it began), not timed.
    let recorded = await lines();
    for (let waited = 0; recorded.length < 2 && waited < 10_000; waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      recorded = await lines();
    }
    expect(recorded).toHaveLength(2);
    expect(recorded[0]).toMatchObject({ outcome: 'error', errorCode: 'ACTION_TIMEOUT', details: { stillRunning: true } });
    expect(recorded[1]).toMatchObject({ outcome: 'ok', details: { late: true } });
  });

  it('aborts a handler\'s signal at the time limit or a cancel, and reports what a handler that stops answers', async () => {
    const kernel = await harness.boot({ userPlugins: { 'user-notes': userNotes([]) }, config: { plugins: { 'user-notes': { trusted: true } }, actions: { timeoutMs: 50 } } });
    // The handler watches its signal and answers when it stops: that answer is what happened, not "failed".
    expect(await kernel.pipeline.call({ target: 'memo_slow', input: {}, principal: admin })).toMatchObject({ status: 'ok', value: { stopped: true } });
    const controller = new AbortController();
    const pending = kernel.pipeline.call({ target: 'memo_slow', input: {}, principal: admin, signal: controller.signal });
    controller.abort();
    expect(await pending).toMatchObject({ status: 'ok', value: { stopped: true } });
    const cancelledFirst = new AbortController();
    cancelledFirst.abort();
    expect((await caught(kernel.pipeline.call({ target: 'memo_slow', input: {}, principal: admin, signal: cancelledFirst.signal }))).code).toBe('ACTION_CANCELLED');
  });

  it('says a handler that does not watch its signal may still be running when it passes its time limit', async () => {
    const kernel = await harness.boot({ userPlugins: { 'user-notes': userNotes([]) }, config: { plugins: { 'user-notes': { trusted: true } }, actions: { timeoutMs: 50 } } });
    const error = await caught(kernel.pipeline.call({ target: 'memo_stuck', input: {}, principal: admin }));
    expect(error.code).toBe('ACTION_TIMEOUT');
    expect(error.details).toMatchObject({ stillRunning: true });
  });

  it('hides agent-only actions from every caller but the agent', async () => {
    const kernel = await harness.boot({ userPlugins: { 'user-notes': userNotes([]) }, config: { plugins: { 'user-notes': { trusted: true } } } });
    expect((await caught(kernel.pipeline.call({ target: 'memo_secret', input: {}, principal: admin }))).code).toBe('ACTION_NOT_FOUND');
    expect((await kernel.pipeline.call({ target: 'memo_secret', input: {}, principal: agent })).status).toBe('ok');
  });

  it('refuses a result that breaks the declared output schema', async () => {
    const kernel = await harness.boot({ userPlugins: { 'user-notes': userNotes([]) }, config: { plugins: { 'user-notes': { trusted: true } } } });
    const error = await caught(kernel.pipeline.call({ target: 'memo_shaped', input: {}, principal: admin }));
    expect(error.code).toBe('PLUGIN_ERROR');
    expect(error.message).toContain('/n');
  });

  it('refuses a user plugin\'s result that JSON cannot carry, naming where in it, in process and out of it', async () => {
    for (const trusted of [true, false]) {
      const kernel = await harness.boot({ userPlugins: { 'user-notes': userNotes([]) }, config: { plugins: { 'user-notes': { trusted } } } });
      for (const [kind, at] of [['bigint', "a BigInt at '/n'"], ['map', "a Map object at '/found'"], ['nan', "NaN at '/ratio'"], ['cycle', "a cycle (an object inside itself) at '/cycle/self'"]] as const) {
        const error = await caught(kernel.pipeline.call({ target: 'memo_odd', input: { kind }, principal: admin }));
        expect([trusted, kind, error.code, error.message]).toEqual([trusted, kind, 'PLUGIN_ERROR', expect.stringContaining(at)]);
      }
      // A graph that shares its objects, 2^60 paths deep: each object is checked once (it was walked down every path).
      expect(await kernel.pipeline.call({ target: 'memo_odd', input: { kind: 'shared' }, principal: admin })).toMatchObject({ status: 'ok' });
      // A function: refused where it is (in process), or by the pipe that cannot carry it.
      expect((await caught(kernel.pipeline.call({ target: 'memo_odd', input: { kind: 'fn' }, principal: admin }))).code).toBe('PLUGIN_ERROR');
      // What JSON carries as it is, or by its own toJSON: a Date, an undefined property.
      expect(await kernel.pipeline.call({ target: 'memo_odd', input: { kind: 'date' }, principal: admin })).toMatchObject({ status: 'ok' });
      await kernel.close();
    }
  });

  it('answers result: null over HTTP and MCP for a handler that returned nothing (the field was left out)', async () => {
    const token = 'qk_nothing-admin-token';
    const kernel = await harness.boot({ userPlugins: { 'user-notes': userNotes([]) }, config: { plugins: { 'user-notes': { trusted: true } }, auth: { tokens: [{ name: 'admin', role: 'admin', sha256: createHash('sha256').update(token).digest('hex') }] } } });
    const app = createHttpApp(kernel);
    const response = await app.request('/api/actions/user-notes/memo/odd', { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'nothing' }) });
    expect([response.status, await response.json()]).toEqual([200, { result: null }]);
    const server = await startHttpServer(kernel, { host: '127.0.0.1', port: 0 });
    try {
      const client = await connectMcp(server.url, token);
      const answer = await client.callTool({ name: 'memo_odd', arguments: { kind: 'nothing' } });
      expect([answer.structuredContent, (answer.content as { text: string }[])[0]!.text]).toEqual([{ result: null }, 'null']);
      await client.close();
    } finally {
      await server.close();
    }
  });

  it('finds actions by plugin, tool and action as well as by wire name', async () => {
    const kernel = await harness.boot({ plugins: ['notes'] });
    const outcome = await kernel.pipeline.call({ target: { plugin: 'notes', tool: 'note', action: 'put' }, input: { name: 'a', text: 'x' }, principal: admin });
    expect(outcome.status).toBe('ok');
    expect((await caught(kernel.pipeline.call({ target: { plugin: 'other', tool: 'note', action: 'put' }, input: {}, principal: admin }))).code).toBe('ACTION_NOT_FOUND');
    expect((await caught(kernel.pipeline.call({ target: '__proto__', input: {}, principal: admin }))).code).toBe('ACTION_NOT_FOUND');
  });
});
