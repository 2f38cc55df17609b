import { KernelError } from '../errors.js';
import type { ManifestRecord, ValidManifestRecord as ValidRecord } from '../manifest/load-manifests.js';
import { PLUGIN_VISIBLE_CORE_TOKENS } from '../core-tokens.js';
import { tokenName } from '../tokens.js';
import { orderByDependencies } from './dependency-order.js';

export function recordId(record: ManifestRecord): string {
  return record.ok ? record.compiled.manifest.id : record.id;
}

/** Two manifests with one id: a user plugin may not shadow a native one, nor another user plugin. */
export function checkUniqueIds(records: readonly ManifestRecord[]): void {
  const seen = new Map<string, string>();
  for (const record of records) {
    const id = recordId(record);
    const other = seen.get(id);
    if (other !== undefined) {
      throw new KernelError('PLUGIN_DUPLICATE_ID', `two plugins have the id '${id}': ${other} and ${record.file}`, { details: { id, files: [other, record.file] } });
    }
    seen.set(id, record.file);
  }
}

/** Wire names must be unique across plugins; checked from the manifests, before any plugin code loads. */
export function checkWireNames(records: readonly ValidRecord[]): void {
  const owner = new Map<string, string>();
  for (const record of records) {
    const id = record.compiled.manifest.id;
    for (const action of record.compiled.actions) {
      const other = owner.get(action.wireName);
      if (other !== undefined) {
        throw new KernelError('WIRE_NAME_COLLISION', `plugins '${other}' and '${id}' both define the action '${action.wireName}'; disable one of them in quire.json`, {
          details: { wireName: action.wireName, plugins: [other, id] },
        });
      }
      owner.set(action.wireName, id);
    }
  }
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
