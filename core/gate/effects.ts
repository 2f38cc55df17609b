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

/**
 * The effects an action is held to, said for a refusal: an untrusted plugin that declares none is told
 * why it counts as having every one (a reader was refused an effect-free action, told it had them all).
 */
export function effectsSaid(effects: readonly Effect[], action: { declaredEffects: readonly Effect[]; source: PluginSource; trusted: boolean; pluginId: string }): string {
  const silent = action.source !== 'native' && !action.trusted && action.declaredEffects.length === 0;
  return silent ? `${effects.join(', ')} (plugin '${action.pluginId}' declares no effects, which counts as every effect while it is untrusted; mark it "trusted": true in quire.json once you have read it)` : effects.join(', ');
}

export function isReadOnly(effects: readonly Effect[]): boolean {
  return effects.length === 0;
}

export function coversEffects(granted: readonly Effect[], needed: readonly Effect[]): boolean {
  return needed.every((effect) => granted.includes(effect));
}
