import { describe, expect, it } from 'vitest';
import type { ActiveTurn } from '../../../core/session/session-types.js';
import { DraftCheckpoints } from '../../../core/turn/draft-checkpoints.js';

const turn = (): ActiveTurn => ({ turnID: 't', mode: 'append', userEntryID: '', baseRevision: 0, state: 'running', delta: [], draftContent: '', snapshotIDs: [], promptTokens: 0, completionTokens: 0, updatedAt: '' });
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('draft checkpoints', () => {
  it('saves the text at most once an interval, also the text that came last before a silence, and nothing after the end', async () => {
    const active = turn();
    const saved: string[] = [];
    const drafts = new DraftCheckpoints(active, 'r0', async () => { saved.push(active.draftContent); }, 100);
    drafts.add('one ');
    drafts.add('two ');
    // Nothing yet: the first save comes an interval into the request (a short answer costs none); then the
    // text that came before the silence is saved without more text to set it off.
    expect(saved).toEqual([]);
    await wait(400);
    expect(saved).toEqual(['one two ']);
    // Text, then a silence (the model writes a call's arguments): that text is saved too, once.
    drafts.add('three');
    await wait(400);
    expect(saved).toEqual(['one two ', 'one two three']);
    // An interval since the last save: saved at once. Then text within the interval, and the end: not saved.
    drafts.add(' four');
    drafts.add(' five');
    await drafts.end();
    await wait(150);
    expect(saved).toEqual(['one two ', 'one two three', 'one two three four']);
    // The round's own message takes the text: no draft is left.
    expect([active.draftContent, active.draftRoundID]).toEqual(['', undefined]);
  });
});
