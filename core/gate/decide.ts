import type { DenyRule } from '../config/kernel-config.js';
import type { Effect, PluginSource } from '../plugin-api.js';
import { coversEffects, effectiveEffects } from './effects.js';
import type { Grant } from './grant.js';

export type SessionMode = 'confirm' | 'auto';

/** Everything the gate looks at; the decision is a pure function of it. */
export interface GateInput {
  plugin: string;
  tool: string;
  action: string;
  /** An external MCP tool's own name (RegisteredAction.externalName), which a deny rule may name instead. */
  externalName?: string;
  source: PluginSource;
  trusted: boolean;
  declaredEffects: readonly Effect[];
  /** The notebook the call targets, when its arguments name one. */
  notebook?: string;
  denyRules: readonly DenyRule[];
  grants: readonly Grant[];
  sessionMode: SessionMode;
  allowAutoMode: boolean;
  now: Date;
  /**
   * The model has seen notes of local-only notebooks in this turn's context (released to it, or a model
   * on this machine): a call that sends data away could carry them, so it asks the person whatever
   * grant or mode.
   */
  localOnlyInContext?: boolean;
  /**
   * The call touches a local-only notebook and one that is not (a move, a copy): notes could leave
   * the local-only notebook, and a model off this machine read them there. Asked every time.
   */
  crossesLocalOnly?: boolean;
}

export type GateDecision =
  | { outcome: 'deny'; reason: 'deny_rule'; rule: DenyRule; effects: Effect[] }
  | { outcome: 'run'; reason: 'no_effects' | 'auto_mode'; effects: Effect[] }
  | { outcome: 'run'; reason: 'grant'; grantId: string; effects: Effect[] }
  | { outcome: 'confirm'; reason: 'needs_person' | 'auto_mode_forbidden' | 'local_only_in_context' | 'local_only_crossing'; effects: Effect[] };

/**
 * Decides what happens to an agent's call (DESIGN.md §5): a deny rule denies; no effects runs; a matching
 * grant runs; session mode `auto` runs unless the administrator forbade it; anything else asks the person.
 */
export function decide(input: GateInput): GateDecision {
  const effects = effectiveEffects(input.declaredEffects, input.source, input.trusted);
  const rule = input.denyRules.find((candidate) => denyRuleMatches(candidate, input));
  if (rule) return { outcome: 'deny', reason: 'deny_rule', rule, effects };
  if (effects.length === 0) return { outcome: 'run', reason: 'no_effects', effects };
  if (input.localOnlyInContext === true && effects.includes('dataEgress')) return { outcome: 'confirm', reason: 'local_only_in_context', effects };
  if (input.crossesLocalOnly === true && effects.includes('localWrite')) return { outcome: 'confirm', reason: 'local_only_crossing', effects };
  const grant = input.grants.find((candidate) => grantMatches(candidate, input, effects));
  if (grant) return { outcome: 'run', reason: 'grant', grantId: grant.id, effects };
  if (input.sessionMode === 'auto') {
    return input.allowAutoMode
      ? { outcome: 'run', reason: 'auto_mode', effects }
      : { outcome: 'confirm', reason: 'auto_mode_forbidden', effects };
  }
  return { outcome: 'confirm', reason: 'needs_person', effects };
}

export function denyRuleMatches(rule: DenyRule, call: Pick<GateInput, 'plugin' | 'tool' | 'action' | 'notebook' | 'externalName'>): boolean {
  if (rule.plugin !== undefined && rule.plugin !== call.plugin) return false;
  if (rule.tool !== '*' && rule.tool !== call.tool) return false;
  // An external MCP tool is named by its action or by its own name as its server spells it: a rule
  // written `deleteFile` silently matched nothing, the action being `deletefile`.
  if (rule.action !== undefined && rule.action !== call.action && rule.action !== call.externalName) return false;
  if (rule.notebook !== undefined && rule.notebook !== call.notebook) return false;
  return true;
}

export function grantMatches(grant: Grant, call: Pick<GateInput, 'plugin' | 'tool' | 'action' | 'notebook' | 'now'>, effects: readonly Effect[]): boolean {
  if (grant.plugin !== call.plugin || grant.tool !== call.tool || grant.action !== call.action) return false;
  if (grant.notebook !== undefined && grant.notebook !== call.notebook) return false;
  // An unreadable expiry counts as expired: a grant fails closed.
  if (grant.expiresAt !== undefined && !(Date.parse(grant.expiresAt) > call.now.getTime())) return false;
  return coversEffects(grant.effects, effects);
}
