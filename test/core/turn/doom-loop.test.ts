import { describe, expect, it } from 'vitest';
import { DoomLoopTracker, callSignature } from '../../../core/turn/doom-loop.js';

const failed = (id: string, extra: Record<string, unknown> = {}) => ({ tool: 'block', action: 'update', input: { id, markdown: String(Math.random()), ...extra }, succeeded: false });

describe('the doom-loop tracker', () => {
  it('warns at 3 and at every failure after, and stops at 5 identical failed calls', () => {
    const tracker = new DoomLoopTracker();
    const verdicts = Array.from({ length: 5 }, () => tracker.record(failed('20260101000000-aaaaaaa')).kind);
    expect(verdicts).toEqual(['ok', 'ok', 'warn', 'warn', 'stop']);
  });

  it('ignores content-like arguments in the signature but not the identifying ones', () => {
    expect(callSignature({ tool: 'block', action: 'update', input: { id: 'x', markdown: 'a' } })).toBe(callSignature({ tool: 'block', action: 'update', input: { id: 'x', markdown: 'b' } }));
    expect(callSignature({ tool: 'block', action: 'update', input: { id: 'x' } })).not.toBe(callSignature({ tool: 'block', action: 'update', input: { id: 'y' } }));
  });

  it('starts again after a success or a different call', () => {
    const tracker = new DoomLoopTracker();
    tracker.record(failed('a'));
    tracker.record(failed('a'));
    expect(tracker.record({ tool: 'block', action: 'get', input: { id: 'a' }, succeeded: true }).kind).toBe('ok');
    expect(tracker.record(failed('a')).kind).toBe('ok');
    expect(tracker.record(failed('b')).kind).toBe('ok');
    expect(tracker.record(failed('b')).kind).toBe('ok');
    const third = tracker.record(failed('b'));
    expect(third).toMatchObject({ kind: 'warn', count: 3 });
    expect(third.kind === 'warn' ? third.message : '').toContain("'block_update'");
  });
});
