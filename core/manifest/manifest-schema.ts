import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ValidateFunction } from 'ajv';
import { createAjv, getKernelAjv } from '../schema/ajv.js';
import { NATIVE_MANIFESTS_DIR } from '../paths.js';

export const MANIFEST_SCHEMA_FILE = join(NATIVE_MANIFESTS_DIR, 'plugin-manifest.schema.json');
export const KERNEL_CONFIG_SCHEMA_FILE = join(NATIVE_MANIFESTS_DIR, 'kernel-config.schema.json');

let manifestValidator: ValidateFunction | undefined;
let configValidator: ValidateFunction | undefined;
let pluginSchemaAjv: ReturnType<typeof createAjv> | undefined;

/** The manifest schema, compiled on first use and then reused for every manifest. */
export function getManifestValidator(): ValidateFunction {
  manifestValidator ??= getKernelAjv().compile(readSchema(MANIFEST_SCHEMA_FILE));
  return manifestValidator;
}

/** The quire.json schema, compiled once. */
export function getKernelConfigValidator(): ValidateFunction {
  configValidator ??= getKernelAjv().compile(readSchema(KERNEL_CONFIG_SCHEMA_FILE));
  return configValidator;
}

/**
 * The ajv instance that compiles the schemas plugins declare (action inputs and outputs, plugin config).
 * Defaults are applied so that handlers see the values the schema promises.
 */
export function getPluginSchemaAjv(): ReturnType<typeof createAjv> {
  pluginSchemaAjv ??= createAjv({ useDefaults: true });
  return pluginSchemaAjv;
}

function readSchema(file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
}
