import { ManifestError, PluginError, type ManifestIssue } from '../errors.js';
import { checkUniqueIds, checkWireNames, recordId } from './catalog-checks.js';
import { isPluginEnabled, type KernelConfig } from '../config/kernel-config.js';
import { loadNativeManifests, loadUserManifests, type ManifestRecord, type ValidManifestRecord } from '../manifest/load-manifests.js';
import { formatIssues, runValidator } from '../schema/ajv.js';

/** Every manifest found, split by whether the kernel will activate it. */
export interface PluginCatalog {
  all: ManifestRecord[];
  enabled: ValidManifestRecord[];
  disabled: ManifestRecord[];
  /** Validated config (with schema defaults applied) per enabled plugin. */
  configs: Map<string, Record<string, unknown>>;
}

/**
 * Reads native and user manifests and checks, before any plugin code is imported, that every enabled
 * plugin is valid, unique and configured correctly. Problems of disabled plugins are listed, not fatal.
 */
export async function loadPluginCatalog(config: KernelConfig, nativeDir: string, codeRoot: string, userDir: string): Promise<PluginCatalog> {
  const all = [...await loadNativeManifests(nativeDir, codeRoot), ...await loadUserManifests(userDir)];
  checkUniqueIds(all);
  const enabled: ValidManifestRecord[] = [];
  const disabled: ManifestRecord[] = [];
  const issues: ManifestIssue[] = [];
  for (const record of all) {
    if (!isPluginEnabled(config, recordId(record))) disabled.push(record);
    else if (record.ok) enabled.push(record);
    else issues.push(...record.issues);
  }
  if (issues.length > 0) throw new ManifestError(issues);
  checkWireNames(enabled);
  const configs = new Map(enabled.map((record) => [record.compiled.manifest.id, validatePluginConfig(record, config)]));
  return { all, enabled, disabled, configs };
}

export function validatePluginConfig(record: ValidManifestRecord, config: KernelConfig): Record<string, unknown> {
  const id = record.compiled.manifest.id;
  const given = structuredClone(config.plugins.get(id)?.config ?? {});
  const validate = record.compiled.validateConfig;
  if (!validate) return given;
  const result = runValidator<Record<string, unknown>>(validate, given);
  if (!result.ok) {
    const issues = result.issues.map((issue) => ({ ...issue, pointer: `/plugins/${id}/config${issue.pointer}` }));
    throw new PluginError('PLUGIN_CONFIG_INVALID', id, `quire.json: ${formatIssues(issues)}`, { details: { issues } });
  }
  return result.value;
}
