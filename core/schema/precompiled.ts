import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
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
  const file = precompiledFile(name, dir);
  let source = readAhead.get(file);
  readAhead.delete(file);
  taken.add(file);
  if (source === undefined) {
    try {
      source = readFileSync(file, 'utf8');
    } catch {
      return undefined;
    }
  }
  const newline = source.indexOf('\n');
  if (source.slice(0, newline) !== `// ${schemaFingerprint(instance, schema)}`) return undefined;
  // Evaluated as ajv evaluates the code it compiles (a function from source), with the runtime helpers
  // and formats it requires resolved from here, wherever the file lies.
  const module = { exports: {} as { default?: ValidateFunction } };
  new Function('module', 'exports', 'require', source)(module, module.exports, runtimeRequire);
  return module.exports.default;
}

/** Validators' code read ahead of their first use, by file; taken out when used. */
const readAhead = new Map<string, string>();
/** Files loaded already, which reading ahead skips. */
const taken = new Set<string>();

/**
 * Reads the generated validators not used yet into memory, one file after another on the thread pool,
 * so that an action's first call does not read its own synchronously: on a cold disk that read waits
 * behind every other (a search's pages, the semantic graph), and held the event loop for 105-546 ms.
 * Started once the plugins are active, not awaited; about 1.4 MB for the native plugins' 160 files.
 * Resolves with the number of files read; a folder that is not there (sources run by vitest) reads none.
 */
export async function readPrecompiledAhead(dir = PRECOMPILED_DIR): Promise<number> {
  const names = await readdir(dir).catch(() => [] as string[]);
  let read = 0;
  for (const name of names) {
    const file = join(dir, name);
    if (!name.endsWith('.cjs') || taken.has(file) || readAhead.has(file)) continue;
    const source = await readFile(file, 'utf8').catch(() => undefined);
    // Used while it was being read: the synchronous read already served it.
    if (source === undefined || taken.has(file)) continue;
    readAhead.set(file, source);
    read++;
  }
  return read;
}
