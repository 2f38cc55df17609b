import { ALL_EFFECTS, type Effect, type PluginSource } from '../plugin-api.js';

/**
 * The effects the gate and the role check act on. A user or external tool that declares nothing and is
 * not trusted could do anything, so it is treated as having every effect; declared effects are believed
 * for native plugins and for plugins the person marked trusted.
 */
export function effectiveEffects(declared: readonly Effect[], source: PluginSource, trusted: boolean): Effect[] {
  if (source !== 'native' && !trusted && declared.length === 0) return [...ALL_EFFECTS];
  return [...declared];
}

export function isReadOnly(effects: readonly Effect[]): boolean {
  return effects.length === 0;
}

export function coversEffects(granted: readonly Effect[], needed: readonly Effect[]): boolean {
  return needed.every((effect) => granted.includes(effect));
}
