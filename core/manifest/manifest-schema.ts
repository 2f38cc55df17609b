import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ValidateFunction } from 'ajv';
import { PLUGIN_AJV_OPTIONS, createAjv, getKernelAjv } from '../schema/ajv.js';
import { linearRegExp } from '../schema/linear-regexp.js';
import { loadPrecompiled } from '../schema/precompiled.js';
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

/** The quire.json schema, compiled once (generated at build time where `npm run build` made it). */
export function getKernelConfigValidator(): ValidateFunction {
  if (!configValidator) {
    const schema = readSchema(KERNEL_CONFIG_SCHEMA_FILE);
    configValidator = loadPrecompiled('kernel-config', 'kernel', schema) ?? getKernelAjv().compile(schema);
  }
  return configValidator;
}

/**
 * The ajv instance that compiles the schemas plugins declare (action inputs and outputs, plugin config).
 * Defaults are applied so that handlers see the values the schema promises.
 */
export function getPluginSchemaAjv(): ReturnType<typeof createAjv> {
  pluginSchemaAjv ??= createAjv(PLUGIN_AJV_OPTIONS);
  return pluginSchemaAjv;
}

let foreignSchemaAjv: ReturnType<typeof createAjv> | undefined;

/**
 * The instance for schemas the kernel did not write (user plugins' manifests, external MCP servers'
 * tools): as `getPluginSchemaAjv`, with patterns run by a linear-time engine (linear-regexp.ts).
 */
export function getForeignSchemaAjv(): ReturnType<typeof createAjv> {
  foreignSchemaAjv ??= createAjv({ ...PLUGIN_AJV_OPTIONS, code: { regExp: linearRegExp } });
  return foreignSchemaAjv;
}

function readSchema(file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
}
