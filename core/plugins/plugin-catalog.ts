import { PluginError } from '../errors.js';
import { isPluginEnabled, type KernelConfig } from '../config/kernel-config.js';
import { loadNativeManifests, loadUserManifests, type ManifestRecord, type ValidManifestRecord } from '../manifest/load-manifests.js';
import { formatIssues, runValidator } from '../schema/ajv.js';
import { planActivation, type ActivationPlan } from './activation-plan.js';

/** Every manifest found, and what the kernel does with each: activate it (in order), leave it disabled, or refuse it. */
export interface PluginCatalog extends ActivationPlan {
  all: ManifestRecord[];
}

/**
 * Reads native and user manifests and plans, before any plugin code is imported, which plugins to
 * activate. A native plugin's problem stops the start (it is part of the kernel); a user plugin's
 * problem refuses that plugin (and those needing it), listed with its problems.
 */
export async function loadPluginCatalog(config: KernelConfig, nativeDir: string, codeRoot: string, userDir: string): Promise<PluginCatalog> {
  const all = [...await loadNativeManifests(nativeDir, codeRoot), ...await loadUserManifests(userDir)];
  const plan = planActivation(all, {
    isEnabled: (id) => isPluginEnabled(config, id),
    isFatal: (record) => record.source === 'native',
    configOf: (record) => validatePluginConfig(record, config),
  });
  return { all, ...plan };
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
