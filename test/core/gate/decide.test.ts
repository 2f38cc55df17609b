import { describe, expect, it } from 'vitest';
import { decide, type GateInput } from '../../../core/gate/decide.js';
import type { Grant } from '../../../core/gate/grant.js';

const now = new Date('2026-11-29T12:00:00Z');

function input(overrides: Partial<GateInput> = {}): GateInput {
  return {
    plugin: 'blocks', tool: 'block', action: 'update', source: 'native', trusted: true,
    declaredEffects: ['localWrite'], denyRules: [], grants: [], sessionMode: 'confirm', allowAutoMode: true, now,
    ...overrides,
  };
}

function grant(overrides: Partial<Grant> = {}): Grant {
  return {
    id: '20261129120000-grant01', plugin: 'blocks', tool: 'block', action: 'update', effects: ['localWrite'],
    createdAt: '2026-11-29T11:00:00Z', createdBy: 'person:admin', ...overrides,
  };
}

describe('effects gate decision table', () => {
  it.each<[string, Partial<GateInput>, string, string]>([
    ['a deny rule on the tool denies', { denyRules: [{ tool: 'block' }] }, 'deny', 'deny_rule'],
    ['a deny rule on the action denies', { denyRules: [{ tool: 'block', action: 'update' }] }, 'deny', 'deny_rule'],
    ['a deny rule on another action does not apply', { denyRules: [{ tool: 'block', action: 'delete' }] }, 'confirm', 'needs_person'],
    ['a deny rule on another plugin does not apply', { denyRules: [{ plugin: 'other', tool: 'block' }] }, 'confirm', 'needs_person'],
    ['a deny rule "*" denies every tool', { denyRules: [{ tool: '*' }] }, 'deny', 'deny_rule'],
    ['a notebook deny rule applies to that notebook', { denyRules: [{ tool: 'block', notebook: 'nb1' }], notebook: 'nb1' }, 'deny', 'deny_rule'],
    ['a notebook deny rule ignores other notebooks', { denyRules: [{ tool: 'block', notebook: 'nb1' }], notebook: 'nb2' }, 'confirm', 'needs_person'],
    ['a deny rule beats no effects', { declaredEffects: [], denyRules: [{ tool: 'block' }] }, 'deny', 'deny_rule'],
    ['a deny rule beats auto mode', { sessionMode: 'auto', denyRules: [{ tool: 'block' }] }, 'deny', 'deny_rule'],
    ['a deny rule beats a grant', { grants: [grant()], denyRules: [{ tool: 'block' }] }, 'deny', 'deny_rule'],
    ['a native action with no effects runs', { declaredEffects: [] }, 'run', 'no_effects'],
    ['a trusted user action with no effects runs', { source: 'user', trusted: true, declaredEffects: [] }, 'run', 'no_effects'],
    ['an untrusted user action declaring no effects is treated as every effect', { source: 'user', trusted: false, declaredEffects: [] }, 'confirm', 'needs_person'],
    ['an untrusted external tool declaring no effects is treated as every effect', { source: 'mcp', trusted: false, declaredEffects: [] }, 'confirm', 'needs_person'],
    ['an untrusted user action declaring effects asks the person', { source: 'user', trusted: false, declaredEffects: ['localWrite'] }, 'confirm', 'needs_person'],
    ['a write with a matching grant runs', { grants: [grant()] }, 'run', 'grant'],
    ['a grant for another action does not match', { grants: [grant({ action: 'delete' })] }, 'confirm', 'needs_person'],
    ['a grant for another plugin does not match', { grants: [grant({ plugin: 'other' })] }, 'confirm', 'needs_person'],
    ['a notebook grant matches calls on that notebook', { grants: [grant({ notebook: 'nb1' })], notebook: 'nb1' }, 'run', 'grant'],
    ['a notebook grant does not match another notebook', { grants: [grant({ notebook: 'nb1' })], notebook: 'nb2' }, 'confirm', 'needs_person'],
    ['a notebook grant does not match a call naming no notebook', { grants: [grant({ notebook: 'nb1' })] }, 'confirm', 'needs_person'],
    ['an expired grant does not match', { grants: [grant({ expiresAt: '2026-11-29T11:59:59Z' })] }, 'confirm', 'needs_person'],
    ['a grant with an unreadable expiry does not match', { grants: [grant({ expiresAt: 'next tuesday' })] }, 'confirm', 'needs_person'],
    ['a grant expiring later matches', { grants: [grant({ expiresAt: '2026-11-29T12:00:01Z' })] }, 'run', 'grant'],
    ['a grant does not cover effects added since it was given', { declaredEffects: ['localWrite', 'dataEgress'], grants: [grant()] }, 'confirm', 'needs_person'],
    ['a grant covering an untrusted tool\'s assumed effects matches', { source: 'user', trusted: false, declaredEffects: [], grants: [grant({ effects: ['localWrite', 'dataEgress', 'externalCost'] })] }, 'run', 'grant'],
    ['auto mode runs a write', { sessionMode: 'auto' }, 'run', 'auto_mode'],
    ['auto mode forbidden by the administrator asks the person', { sessionMode: 'auto', allowAutoMode: false }, 'confirm', 'auto_mode_forbidden'],
    ['a write in confirm mode asks the person', {}, 'confirm', 'needs_person'],
    ['egress asks the person', { declaredEffects: ['dataEgress'] }, 'confirm', 'needs_person'],
    ['cost asks the person', { declaredEffects: ['externalCost'] }, 'confirm', 'needs_person'],
  ])('%s', (_title, overrides, outcome, reason) => {
    const decision = decide(input(overrides));
    expect(decision.outcome).toBe(outcome);
    expect(decision.reason).toBe(reason);
  });

  it('reports the effects it decided on, every effect for an untrusted silent tool', () => {
    expect(decide(input({ source: 'mcp', trusted: false, declaredEffects: [] })).effects).toEqual(['localWrite', 'dataEgress', 'externalCost']);
    expect(decide(input({ declaredEffects: ['dataEgress'] })).effects).toEqual(['dataEgress']);
  });

  it('names the grant that let a call through', () => {
    const decision = decide(input({ grants: [grant({ id: 'g-1' })] }));
    expect(decision).toMatchObject({ outcome: 'run', reason: 'grant', grantId: 'g-1' });
  });
});
