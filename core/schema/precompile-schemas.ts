/**
 * Build step (`npm run build`, after tsc): writes the standalone validators core/schema/precompiled.ts
 * loads, one file per schema, into dist/precompiled/. Deterministic: the same schemas and ajv version
 * give the same files.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { _ } from 'ajv';
import standaloneModule from 'ajv/dist/standalone/index.js';
import { GRANTS_FILE_SCHEMA } from '../gate/grants-file-schema.js';
import { NATIVE_MANIFESTS_DIR } from '../paths.js';
import { KERNEL_CONFIG_SCHEMA_FILE } from '../manifest/manifest-schema.js';
import { KERNEL_AJV_OPTIONS, PLUGIN_AJV_OPTIONS, createAjv } from './ajv.js';
import { PRECOMPILED_DIR, actionValidatorName, configValidatorName, precompiledFile, schemaFingerprint, type SchemaInstance } from './precompiled.js';

// CommonJS under NodeNext: the default import is the module object (as for ajv-formats in ajv.ts).
const standaloneCode = standaloneModule.default;

interface Target { name: string; instance: SchemaInstance; schema: object }

/** Every schema of the kernel and its native plugins, with the name the loader asks for. */
export function precompileTargets(manifestsDir = NATIVE_MANIFESTS_DIR): Target[] {
  const targets: Target[] = [
    { name: 'kernel-config', instance: 'kernel', schema: readJson(KERNEL_CONFIG_SCHEMA_FILE) },
    { name: 'grants-file', instance: 'kernel', schema: GRANTS_FILE_SCHEMA },
  ];
  for (const file of readdirSync(manifestsDir).filter((name) => name.endsWith('.json') && !name.endsWith('.schema.json')).sort()) {
    const manifest = readJson(join(manifestsDir, file)) as { id: string; config?: object; tools?: { name: string; actions: Record<string, { input?: object; output?: object }> }[] };
    if (manifest.config) targets.push({ name: configValidatorName(manifest.id), instance: 'plugin', schema: manifest.config });
    for (const tool of manifest.tools ?? []) {
      for (const [action, spec] of Object.entries(tool.actions)) {
        if (spec.input) targets.push({ name: actionValidatorName(manifest.id, tool.name, action, 'input'), instance: 'plugin', schema: spec.input });
        if (spec.output) targets.push({ name: actionValidatorName(manifest.id, tool.name, action, 'output'), instance: 'plugin', schema: spec.output });
      }
    }
  }
  return targets;
}

/** Writes every target's validator into `dir`, replacing what was there. */
export function writePrecompiled(dir = PRECOMPILED_DIR, targets = precompileTargets()): number {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  // One instance per kind, as at run time, generating code that requires the same formats.
  const code = { source: true, formats: _`require("ajv-formats/dist/formats").fullFormats` };
  const instances = { kernel: createAjv({ ...KERNEL_AJV_OPTIONS, code }), plugin: createAjv({ ...PLUGIN_AJV_OPTIONS, code }) };
  for (const { name, instance, schema } of targets) {
    const ajv = instances[instance];
    writeFileSync(precompiledFile(name, dir), `// ${schemaFingerprint(instance, schema)}\n${standaloneCode(ajv, ajv.compile(schema))}\n`);
  }
  return targets.length;
}

function readJson(file: string): object {
  return JSON.parse(readFileSync(file, 'utf8')) as object;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  console.log(`precompiled ${writePrecompiled()} schema validators into ${PRECOMPILED_DIR}`);
}
