import type { ManifestRecord, ValidManifestRecord as ValidRecord } from '../manifest/load-manifests.js';
import { PLUGIN_VISIBLE_CORE_TOKENS } from '../core-tokens.js';
import { tokenName } from '../tokens.js';
import { orderByDependencies } from './dependency-order.js';

export function recordId(record: ManifestRecord): string {
  return record.ok ? record.compiled.manifest.id : record.id;
}

/** The capability names the kernel itself offers to plugins. */
export function coreCapabilities(): Set<string> {
  return new Set([...PLUGIN_VISIBLE_CORE_TOKENS].map(tokenName));
}

/** Activation order of a set of valid manifests; throws for a missing or cyclic requirement. */
export function activationOrder(records: readonly ValidRecord[], disabledProviders?: ReadonlyMap<string, string>): string[] {
  return orderByDependencies(
    records.map((record) => ({ id: record.compiled.manifest.id, requires: record.compiled.manifest.requires ?? [], provides: record.compiled.manifest.provides ?? [] })),
    { available: coreCapabilities(), ...(disabledProviders ? { disabledProviders } : {}) },
  );
}
