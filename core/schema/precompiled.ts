import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { ValidateFunction } from 'ajv';
import { CODE_ROOT } from '../paths.js';

/**
 * Validators of the kernel's own schemas (quire.json, native plugins' config and action schemas),
 * generated as ajv standalone code by `npm run build` (core/schema/precompile-schemas.ts) into
 * dist/precompiled/. Compiling them at start cost 150-200 ms of every `quire serve`, most of it ajv's
 * own code generator running cold. Sources run by vitest have no such folder and compile as before.
 */
export const PRECOMPILED_DIR = join(CODE_ROOT, 'precompiled');

/** Which ajv instance a validator stands for: the options are part of what the code was generated from. */
export type SchemaInstance = 'kernel' | 'plugin';

const runtimeRequire = createRequire(import.meta.url);
const AJV_VERSION = (runtimeRequire('ajv/package.json') as { version: string }).version;

/** What a validator was generated from: the schema exactly, the instance, and the ajv version. */
export function schemaFingerprint(instance: SchemaInstance, schema: unknown): string {
  return createHash('sha256').update(`${AJV_VERSION}\n${instance}\n${JSON.stringify(schema)}`).digest('hex');
}

/** The names the loader asks for: a native plugin's config, and an action's input or output. */
export const configValidatorName = (plugin: string): string => `config.${plugin}`;
export const actionValidatorName = (plugin: string, tool: string, action: string, part: 'input' | 'output'): string => `action.${plugin}.${tool}.${action}.${part}`;

/** The file name of a precompiled validator (names are plugin ids, tools and actions: kept to safe characters). */
export function precompiledFile(name: string, dir = PRECOMPILED_DIR): string {
  return join(dir, `${name.replace(/[^A-Za-z0-9_.-]/g, '_')}.cjs`);
}

/**
 * The generated validator for `schema`, or undefined when there is none or it was generated from
 * anything else (another schema, instance or ajv version): the caller then compiles the schema itself.
 */
export function loadPrecompiled(name: string, instance: SchemaInstance, schema: unknown, dir = PRECOMPILED_DIR): ValidateFunction | undefined {
  let source: string;
  try {
    source = readFileSync(precompiledFile(name, dir), 'utf8');
  } catch {
    return undefined;
  }
  const newline = source.indexOf('\n');
  if (source.slice(0, newline) !== `// ${schemaFingerprint(instance, schema)}`) return undefined;
  // Evaluated as ajv evaluates the code it compiles (a function from source), with the runtime helpers
  // and formats it requires resolved from here, wherever the file lies.
  const module = { exports: {} as { default?: ValidateFunction } };
  new Function('module', 'exports', 'require', source)(module, module.exports, runtimeRequire);
  return module.exports.default;
}
