import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { ModelEvent, ModelProvider, ModelRequest } from '../../../core/turn/model-provider.js';
import { meteredProvider } from '../../../core/usage/metered-provider.js';
import { UsageLedger } from '../../../core/usage/usage-ledger.js';
import { useHarness } from '../../helpers/harness.js';

/** A model whose answer waits until `finish` is called, then reports its usage (or breaks off, unreported). */
function heldModel(): ModelProvider & { finish(how: 'usage' | 'break'): void } {
  let finish!: (how: 'usage' | 'break') => void;
  const done = new Promise<'usage' | 'break'>((resolve) => { finish = resolve; });
  return {
    id: 'held', model: 'm',
    finish: (how) => finish(how),
    async *stream(): AsyncIterable<ModelEvent> {
      yield { type: 'text', delta: 'a partial answer of some length' };
      if ((await done) === 'break') throw new Error('the connection was reset');
      yield { type: 'usage', promptTokens: 100, completionTokens: 50 };
      yield { type: 'finish', reason: 'stop' };
    },
  };
}

const request: ModelRequest = { messages: [{ role: 'user', content: 'hello' }], tools: [], maxOutputTokens: 1000 } as unknown as ModelRequest;

async function drain(stream: AsyncIterable<ModelEvent>): Promise<void> {
  try {
    for await (const _event of stream) { /* read */ }
  } catch {
    // a broken stream
  }
}

describe('budgets and the ledger while requests are answering', () => {
  const harness = useHarness();

  it('counts requests still answering in other sessions against the day budget, at their largest', async () => {
    const ledger = new UsageLedger(join(await harness.tempDir(), 'usage.db'), () => ({}));
    try {
      // Room for one request's worst case (100 in + 1,000 out), not for two.
      const context = (sessionId: string) => ({ ledger, budgets: { day: { tokens: 1500 } }, prices: () => ({}), sessionId, turnId: () => 't', estimate: () => 100 });
      const first = heldModel();
      const one = meteredProvider(first, context('s1'));
      const two = meteredProvider(heldModel(), context('s2'));
      const signal = new AbortController().signal;
      await one.beforeRequest!(request, signal);
      const answering = drain(one.stream(request, signal));
      // Nothing is recorded yet: the ledger alone would let this one through.
      await expect(two.beforeRequest!(request, signal)).rejects.toMatchObject({ category: 'budget_exceeded', message: expect.stringContaining('still answering') });
      first.finish('usage');
      await answering;
      expect(ledger.total({}).input).toBe(100);
    } finally {
      ledger.close();
    }
  });

  it('records a request that broke off after the server began to answer, as estimated', async () => {
    const ledger = new UsageLedger(join(await harness.tempDir(), 'usage.db'), () => ({}));
    try {
      const model = heldModel();
      const metered = meteredProvider(model, { ledger, budgets: {}, prices: () => ({}), sessionId: 's1', turnId: () => 't', estimate: () => 100 });
      const signal = new AbortController().signal;
      const answering = drain(metered.stream(request, signal));
      model.finish('break');
      await answering;
      const rows = ledger.report('session');
      expect(rows).toEqual([expect.objectContaining({ key: 's1', requests: 1, input: 100, output: 8 })]);
    } finally {
      ledger.close();
    }
  });

  it('holds nothing for a request checked after its turn was stopped (a Stop during a retry wait)', async () => {
    const ledger = new UsageLedger(join(await harness.tempDir(), 'usage.db'), () => ({}));
    try {
      const context = (sessionId: string) => ({ ledger, budgets: { day: { tokens: 1500 } }, prices: () => ({}), sessionId, turnId: () => 't', estimate: () => 100 });
      const stopped = new AbortController();
      stopped.abort();
      // Checked, then never streamed: the turn saw its Stop.
      await meteredProvider(heldModel(), context('s1')).beforeRequest!(request, stopped.signal);
      // Another session's request has the whole day's room (it was refused for half an hour).
      await expect(meteredProvider(heldModel(), context('s2')).beforeRequest!(request, new AbortController().signal)).resolves.toBeUndefined();
    } finally {
      ledger.close();
    }
  });

  it('counts usage the ledger could not record in the day it happened, not in the days after', async () => {
    const ledger = new UsageLedger(join(await harness.tempDir(), 'usage.db'), () => ({}));
    ledger.record = () => { throw new Error('SQLITE_FULL: database or disk is full'); };
    try {
      const context = { ledger, budgets: { day: { tokens: 1500 } }, prices: () => ({}), sessionId: 's1', turnId: () => 't', estimate: () => 100 };
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(new Date('2026-11-30T23:00:00Z'));
      const model = heldModel();
      const metered = meteredProvider(model, context);
      const signal = new AbortController().signal;
      await metered.beforeRequest!(request, signal);
      const answering = drain(metered.stream(request, signal));
      model.finish('usage');
      await answering;
      // The same day, the 150 tokens not recorded still count: 150 + 100 in + 1,000 out is past 1,200.
      await expect(meteredProvider(heldModel(), { ...context, budgets: { day: { tokens: 1_200 } } }).beforeRequest!(request, signal)).rejects.toMatchObject({ category: 'budget_exceeded' });
      // The next day they do not.
      vi.setSystemTime(new Date('2026-12-01T01:00:00Z'));
      await expect(meteredProvider(heldModel(), { ...context, budgets: { day: { tokens: 1_200 } } }).beforeRequest!(request, signal)).resolves.toBeUndefined();
    } finally {
      vi.useRealTimers();
      ledger.close();
    }
  });
});
