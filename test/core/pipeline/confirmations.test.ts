import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import type { Principal } from '../../../core/plugin-api.js';
import { Kernel } from '../../../core/kernel.js';
import { hashArguments } from '../../../core/canonical-json.js';
import { caught, useHarness } from '../../helpers/harness.js';

const agent: Principal = { kind: 'agent', name: 'agent:s1/t1/c1', role: 'admin', sessionId: 's1', turnId: 't1' };
const person: Principal = { kind: 'person', name: 'admin', role: 'admin' };

describe('confirmations', () => {
  const harness = useHarness();

  async function pendingPut(kernel: Kernel, input: Record<string, unknown> = { name: 'a', text: 'hello', notebook: 'nb1' }) {
    const outcome = await kernel.pipeline.call({ target: 'note_put', input, principal: agent });
    if (outcome.status !== 'confirmation_required') throw new Error('expected a confirmation');
    return outcome;
  }

  it('pauses an agent write with a confirmation carrying id, tool, action, arguments, their hash and effects', async () => {
    const kernel = await harness.boot({ plugins: ['notes'] });
    const { confirmation } = await pendingPut(kernel);
    expect(confirmation).toMatchObject({
      // The person sees, and the hash covers, the arguments as they will run: schema defaults included.
      plugin: 'notes', tool: 'note', action: 'put', arguments: { name: 'a', text: 'hello', notebook: 'nb1', format: 'text' },
      argsHash: hashArguments({ name: 'a', text: 'hello', notebook: 'nb1', format: 'text' }), effects: ['localWrite'], status: 'pending',
      sessionId: 's1', notebook: 'nb1',
    });
    expect(confirmation.id).toMatch(/^\d{14}-[0-9a-z]{7}$/);
  });

  it('runs the call once after approval, and never twice on the same approval', async () => {
    const kernel = await harness.boot({ plugins: ['notes'] });
    const { confirmation, call } = await pendingPut(kernel);
    await kernel.confirmations.answer(confirmation.id, { approved: true, argsHash: confirmation.argsHash, answeredBy: 'person:admin' });
    expect(await kernel.pipeline.execute(call, { confirmationId: confirmation.id })).toEqual({ name: 'a', written: true, format: 'text' });
    const again = await caught(kernel.pipeline.execute(call, { confirmationId: confirmation.id }));
    expect(again.code).toBe('CONFIRMATION_NOT_APPROVED');
  });

  it('does not run a call that needs confirmation without one, or with a rejected one', async () => {
    const kernel = await harness.boot({ plugins: ['notes'] });
    const { confirmation, call } = await pendingPut(kernel);
    expect((await caught(kernel.pipeline.execute(call))).code).toBe('CONFIRMATION_NOT_APPROVED');
    await kernel.confirmations.answer(confirmation.id, { approved: false, argsHash: confirmation.argsHash, answeredBy: 'person:admin' });
    expect((await caught(kernel.pipeline.execute(call, { confirmationId: confirmation.id }))).code).toBe('CONFIRMATION_NOT_APPROVED');
    expect((await caught(kernel.pipeline.call({ target: 'note_get', input: { name: 'a' }, principal: person }))).code).toBe('NOT_FOUND');
  });

  it('accepts exactly one answer: a second one is refused and changes nothing', async () => {
    const kernel = await harness.boot({ plugins: ['notes'] });
    const { confirmation } = await pendingPut(kernel);
    await kernel.confirmations.answer(confirmation.id, { approved: false, argsHash: confirmation.argsHash, answeredBy: 'person:a' });
    const second = await caught(kernel.confirmations.answer(confirmation.id, { approved: true, argsHash: confirmation.argsHash, answeredBy: 'person:b' }));
    expect(second.code).toBe('CONFIRMATION_ALREADY_ANSWERED');
    expect(kernel.confirmations.get(confirmation.id)).toMatchObject({ status: 'rejected', answeredBy: 'person:a' });
  });

  it('accepts one answer when two arrive at the same time', async () => {
    const kernel = await harness.boot({ plugins: ['notes'] });
    const { confirmation } = await pendingPut(kernel);
    const answers = await Promise.allSettled([
      kernel.confirmations.answer(confirmation.id, { approved: true, argsHash: confirmation.argsHash, answeredBy: 'person:a' }),
      kernel.confirmations.answer(confirmation.id, { approved: false, argsHash: confirmation.argsHash, answeredBy: 'person:b' }),
    ]);
    expect(answers.map((answer) => answer.status).sort()).toEqual(['fulfilled', 'rejected']);
  });

  it('refuses an answer for other arguments and leaves the confirmation pending', async () => {
    const kernel = await harness.boot({ plugins: ['notes'] });
    const { confirmation } = await pendingPut(kernel);
    const otherHash = hashArguments({ name: 'a', text: 'something else', notebook: 'nb1' });
    const error = await caught(kernel.confirmations.answer(confirmation.id, { approved: true, argsHash: otherHash, answeredBy: 'person:admin' }));
    expect(error.code).toBe('CONFIRMATION_ARGS_MISMATCH');
    expect(kernel.confirmations.get(confirmation.id)?.status).toBe('pending');
  });

  it('refuses to run other arguments on an approval given for these', async () => {
    const kernel = await harness.boot({ plugins: ['notes'] });
    const { confirmation } = await pendingPut(kernel);
    await kernel.confirmations.answer(confirmation.id, { approved: true, argsHash: confirmation.argsHash, answeredBy: 'person:admin' });
    const other = kernel.pipeline.prepare({ target: 'note_put', input: { name: 'a', text: 'rm -rf', notebook: 'nb1' }, principal: agent });
    expect((await caught(kernel.pipeline.execute(other, { confirmationId: confirmation.id }))).code).toBe('CONFIRMATION_ARGS_MISMATCH');
    const otherAction = kernel.pipeline.prepare({ target: 'note_delete', input: { name: 'a', notebook: 'nb1' }, principal: agent });
    expect((await caught(kernel.pipeline.execute(otherAction, { confirmationId: confirmation.id }))).code).toBe('CONFIRMATION_ARGS_MISMATCH');
  });

  it('refuses an approval given in one session to a call from another', async () => {
    const kernel = await harness.boot({ plugins: ['notes'] });
    const { confirmation } = await pendingPut(kernel);
    await kernel.confirmations.answer(confirmation.id, { approved: true, argsHash: confirmation.argsHash, answeredBy: 'person:admin' });
    const otherSession = kernel.pipeline.prepare({ target: 'note_put', input: confirmation.arguments, principal: { ...agent, sessionId: 's2' } });
    expect((await caught(kernel.pipeline.execute(otherSession, { confirmationId: confirmation.id }))).code).toBe('CONFIRMATION_SESSION_MISMATCH');
    expect(kernel.confirmations.get(confirmation.id)?.status).toBe('approved');
  });

  it("runs an approved call with the plugin's handler as it is now when it was disabled and enabled again meanwhile", async () => {
    // Each activation counts itself and knows whether it was disposed: the handler says which one ran.
    const code = `export default { activate(ctx) {
      const generation = (globalThis.__quireGeneration = (globalThis.__quireGeneration ?? 0) + 1);
      let disposed = false;
      ctx.onDispose(() => { disposed = true; });
      return { stamp: { put: () => ({ generation, disposed }) } };
    } };`;
    const tool = { name: 'stamp', description: 'x', actions: { put: { description: 'x', input: { type: 'object' }, effects: ['localWrite'] } } };
    const kernel = await harness.boot({ config: { plugins: { stamper: { trusted: true } } }, userPlugins: { stamper: { manifest: { id: 'stamper', version: '1.0.0', kernel: '^0.1.0', description: 'x', entry: 'index.js', tools: [tool] }, code } } });
    const outcome = await kernel.pipeline.call({ target: 'stamp_put', input: {}, principal: agent });
    if (outcome.status !== 'confirmation_required') throw new Error('expected a confirmation');
    await kernel.plugins.setEnabled('stamper', false);
    await kernel.plugins.setEnabled('stamper', true);
    await kernel.confirmations.answer(outcome.confirmation.id, { approved: true, argsHash: outcome.confirmation.argsHash, answeredBy: 'person:admin' });
    const result = await kernel.pipeline.execute(outcome.call, { confirmationId: outcome.confirmation.id }) as { generation: number; disposed: boolean };
    expect(result.disposed).toBe(false);
  });

  it('refuses to run arguments changed after they were approved', async () => {
    const kernel = await harness.boot({ plugins: ['notes'] });
    const { confirmation, call } = await pendingPut(kernel);
    await kernel.confirmations.answer(confirmation.id, { approved: true, argsHash: confirmation.argsHash, answeredBy: 'person:admin' });
    call.input.text = 'changed behind the approval';
    expect((await caught(kernel.pipeline.execute(call, { confirmationId: confirmation.id }))).code).toBe('CONFIRMATION_ARGS_MISMATCH');
    expect(kernel.confirmations.get(confirmation.id)?.arguments).toMatchObject({ text: 'hello' });
  });

  it('turns "always" into a scoped grant in grants.json that lets later calls through until revoked', async () => {
    const kernel = await harness.boot({ plugins: ['notes'] });
    const { confirmation } = await pendingPut(kernel);
    const answered = await kernel.confirmations.answer(confirmation.id, { approved: true, always: true, argsHash: confirmation.argsHash, answeredBy: 'person:admin' });
    const stored = JSON.parse(await readFile(kernel.workspace.grantsFile, 'utf8')) as { grants: { id: string; notebook?: string }[] };
    expect(stored.grants).toEqual([expect.objectContaining({ id: answered.grantId, plugin: 'notes', tool: 'note', action: 'put', notebook: 'nb1', effects: ['localWrite'] })]);
    const sameNotebook = await kernel.pipeline.call({ target: 'note_put', input: { name: 'b', text: 'x', notebook: 'nb1' }, principal: agent });
    expect(sameNotebook.status).toBe('ok');
    const otherNotebook = await kernel.pipeline.call({ target: 'note_put', input: { name: 'c', text: 'x', notebook: 'nb2' }, principal: agent });
    expect(otherNotebook.status).toBe('confirmation_required');
    await kernel.grants.revoke(answered.grantId ?? '');
    const afterRevoke = await kernel.pipeline.call({ target: 'note_put', input: { name: 'b', text: 'y', notebook: 'nb1' }, principal: agent });
    expect(afterRevoke.status).toBe('confirmation_required');
  });

  it('keeps a turn\'s confirmations across a restart for the record, expired: no turn outlives its kernel, so none is approved and run later', async () => {
    const options = await harness.kernelOptions({ plugins: ['notes'] });
    const first = await Kernel.boot(options);
    const { confirmation } = await pendingPut(first);
    await first.close();
    const second = await Kernel.boot(options);
    try {
      expect(second.confirmations.list({ status: 'pending' })).toEqual([]);
      expect(second.confirmations.get(confirmation.id)).toMatchObject({ status: 'expired', arguments: confirmation.arguments });
      expect((await caught(second.confirmations.answer(confirmation.id, { approved: true, argsHash: confirmation.argsHash, answeredBy: 'person:admin' }))).code).toBe('CONFIRMATION_ALREADY_ANSWERED');
      const call = second.pipeline.prepare({ target: 'note_put', input: confirmation.arguments, principal: agent });
      expect((await caught(second.pipeline.execute(call, { confirmationId: confirmation.id }))).code).toMatch(/^CONFIRMATION_/);
    } finally {
      await second.close();
    }
  });

  it('wakes a waiter when the answer arrives, and stops waiting when cancelled', async () => {
    const kernel = await harness.boot({ plugins: ['notes'] });
    const { confirmation } = await pendingPut(kernel);
    const waiting = kernel.confirmations.waitForAnswer(confirmation.id);
    await kernel.confirmations.answer(confirmation.id, { approved: true, argsHash: confirmation.argsHash, answeredBy: 'person:admin' });
    expect((await waiting).status).toBe('approved');
    const second = await pendingPut(kernel, { name: 'z', text: 'q' });
    const controller = new AbortController();
    const cancelled = kernel.confirmations.waitForAnswer(second.confirmation.id, controller.signal);
    controller.abort(new Error('turn cancelled'));
    await expect(cancelled).rejects.toThrow('turn cancelled');
    expect(kernel.confirmations.get(second.confirmation.id)?.status).toBe('pending');
  });

  it('refuses an unknown confirmation id', async () => {
    const kernel = await harness.boot({ plugins: ['notes'] });
    const error = await caught(kernel.confirmations.answer('20260101000000-nothere', { approved: true, argsHash: '0'.repeat(64), answeredBy: 'x' }));
    expect(error.code).toBe('CONFIRMATION_NOT_FOUND');
  });
});

describe('grants file', () => {
  const harness = useHarness();

  it('refuses to start on a hand-edited grants.json that breaks its shape, naming the pointer', async () => {
    const options = await harness.kernelOptions({ plugins: ['notes'] });
    const { mkdir, writeFile } = await import('node:fs/promises');
    await mkdir(`${options.workspace}/agent`, { recursive: true });
    await writeFile(`${options.workspace}/agent/grants.json`, JSON.stringify({ version: 1, grants: [{ id: 'g', plugin: 'notes', tool: 'note', action: 'put', createdAt: 'x', createdBy: 'y' }] }));
    const error = await caught(Kernel.boot(options));
    expect(error.code).toBe('WORKSPACE_INVALID');
    expect(error.message).toContain('/grants/0/effects');
  });

  it('keeps at most the last 200 answered release questions: an approved one is settled, never consumed', async () => {
    const kernel = await harness.boot({ plugins: ['notes'] });
    for (let i = 0; i < 210; i++) {
      const args = { toolCallId: `c${i}`, text: 'x'.repeat(4_000) };
      const confirmation = await kernel.confirmations.create({
        kind: 'release', plugin: 'kernel', tool: 'egress', action: 'release', wireName: 'release_to_model',
        arguments: args, argsHash: hashArguments(args), effects: ['dataEgress'], destructive: false, principal: `agent:s/t/c${i}`, sessionId: 's', turnId: 't',
      });
      await kernel.confirmations.answer(confirmation.id, { approved: true, argsHash: confirmation.argsHash, answeredBy: 'person:admin' });
    }
    expect(kernel.confirmations.list().length).toBeLessThanOrEqual(200);
  });
});
