import { describe, expect, it } from 'vitest';
import type { ActionCall } from '../../../core/plugin-api.js';
import { CapabilityBroker } from '../../../core/plugins/remote-capabilities.js';
import { caught } from '../../helpers/harness.js';

/** Services as the kernel would resolve them, by capability name. */
const services: Record<string, unknown> = {
  'search.lookup': { whoAsks: (call: { principal: { name: string } }) => call.principal.name, echo: (value: unknown) => value },
  'blocks.index': {
    visibleTo: () => true, beforeFileChange: () => 'a history version written',
    notebooks: () => new Map([['nb-open', { name: 'Open', access: 'published' }], ['nb-private', { name: 'Salaries', access: 'private' }], ['nb-closed', { name: 'Diary', access: 'private' }]]),
  },
  'agent.turn-rollback': { rollbackTurn: () => 'undone' },
  'agent.snapshots': { snapshot: () => 'taken' },
  'gate.policy': { allow: () => true },
  'skills.writes': { write: () => 'written' },
  'core.session-todos': { replace: () => 'replaced' },
};

const realCall = { principal: { kind: 'person', name: 'rita', role: 'reader' } } as unknown as ActionCall;

function broker(...names: string[]): CapabilityBroker {
  const made = new CapabilityBroker(names, (name) => services[name]);
  made.offers();
  return made;
}

describe('what a plugin in a process of its own may call in the kernel', () => {
  it('withholds the capabilities that write what no effect of its actions declares', () => {
    const offers = new CapabilityBroker(['agent.turn-rollback', 'agent.snapshots', 'gate.policy', 'skills.writes', 'core.session-todos', 'search.lookup'], (name) => services[name]).offers();
    expect(offers.map((offer) => [offer.name, offer.kind])).toEqual([
      ['agent.turn-rollback', 'refused'], ['agent.snapshots', 'refused'], ['gate.policy', 'refused'], ['skills.writes', 'refused'], ['core.session-todos', 'refused'], ['search.lookup', 'methods'],
    ]);
    expect(offers[0]).toMatchObject({ message: expect.stringContaining('mark it trusted') });
  });

  it('offers the blocks index without its method that writes a history version', async () => {
    const offer = new CapabilityBroker(['blocks.index'], (name) => services[name]).offers()[0];
    expect(offer).toEqual({ name: 'blocks.index', kind: 'methods', methods: ['visibleTo', 'notebooks'] });
    expect((await caught(broker('blocks.index').invoke('blocks.index', 'beforeFileChange', [], realCall))).code).toBe('CAPABILITY_DENIED');
  });

  it('names only the notebooks the caller may read: a reader\'s the published ones, the agent\'s not those closed to it', async () => {
    // Every notebook's name and settings went to a plugin answering a reader.
    const names = async (call: ActionCall): Promise<string[]> => [...(await broker('blocks.index').invoke('blocks.index', 'notebooks', [], call) as Map<string, { name: string }>).values()].map((conf) => conf.name);
    expect(await names(realCall)).toEqual(['Open']);
    const agent = { principal: { kind: 'agent', name: 'agent', role: 'admin' }, deniedNotebooks: new Set(['nb-closed']) } as unknown as ActionCall;
    expect(await names(agent)).toEqual(['Open', 'Salaries']);
    const admin = { principal: { kind: 'person', name: 'alice', role: 'admin' } } as unknown as ActionCall;
    expect(await names(admin)).toEqual(['Open', 'Salaries', 'Diary']);
  });

  it("puts the kernel's own call in place of a call the plugin passes, so it cannot act for someone else", async () => {
    const forged = { principal: { kind: 'person', name: 'alice', role: 'admin' } };
    expect(await broker('search.lookup').invoke('search.lookup', 'whoAsks', [forged], realCall)).toBe('rita');
    // Arguments that are not calls pass as they are.
    expect(await broker('search.lookup').invoke('search.lookup', 'echo', [{ query: 'x' }], realCall)).toEqual({ query: 'x' });
  });

  it('answers no method outside one of its calls (during activate, or after the call ended)', async () => {
    const failure = await caught(broker('search.lookup').invoke('search.lookup', 'echo', ['x'], undefined));
    expect(failure).toMatchObject({ code: 'CAPABILITY_DENIED', message: expect.stringContaining('none is running') });
  });
});
