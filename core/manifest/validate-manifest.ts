import type { ValidateFunction } from 'ajv';
import { createRequire } from 'node:module';
import type { ErrorCode, ManifestIssue } from '../errors.js';
import type { ActionManifest, PluginManifest } from '../plugin-api.js';
import { KERNEL_VERSION } from '../paths.js';
import { escapePointer, toSchemaIssues, type SchemaIssue } from '../schema/ajv.js';
import { actionValidatorName, configValidatorName, loadPrecompiled } from '../schema/precompiled.js';
import { getForeignSchemaAjv, getManifestValidator, getPluginSchemaAjv } from './manifest-schema.js';
import { isValidWireName, wireName } from './wire-name.js';

/** One action with its schemas compiled: the unit the registry stores. */
export interface CompiledAction {
  tool: string;
  action: string;
  wireName: string;
  spec: ActionManifest;
  validateInput: ValidateFunction;
  validateOutput: ValidateFunction | undefined;
}

export interface CompiledManifest {
  manifest: PluginManifest;
  actions: CompiledAction[];
  validateConfig: ValidateFunction | undefined;
}

export type ManifestValidation = { ok: true; value: CompiledManifest } | { ok: false; issues: ManifestIssue[] };

export interface ValidateManifestOptions {
  file: string;
  /** The id the manifest must carry (its file or folder name). */
  expectedId?: string;
  kernelVersion?: string;
  /**
   * The kernel's own manifests, which ship with it and which a test validates and compiles in full: the
   * manifest schema check is skipped and the action and config schemas are compiled on first use, since
   * compiling the manifest schema and 60-odd action schemas cost a quarter to half a second of every
   * start. A manifest that can be wrong (a user plugin, `quire plugin validate`) is checked and compiled
   * here, so that a schema that does not compile is reported.
   */
  trusted?: boolean;
  /**
   * Written with the kernel (a native manifest, trusted or checked in full): its patterns run on
   * JavaScript's engine (one has a lookahead). Every other manifest's run on a linear-time engine, as
   * they meet text from the agent on the main thread (linear-regexp.ts).
   */
  ours?: boolean;
}

/** Validates a parsed manifest against the schema, then checks what a schema cannot say. */
export function validateManifest(raw: unknown, options: ValidateManifestOptions): ManifestValidation {
  const validate = options.trusted === true ? undefined : getManifestValidator();
  if (validate && !validate(raw)) {
    return { ok: false, issues: toSchemaIssues(validate.errors).map((issue) => schemaIssue(issue, options.file)) };
  }
  const manifest = raw as unknown as PluginManifest;
  const issues: ManifestIssue[] = [];
  const report = (code: ErrorCode, pointer: string, message: string): void => {
    issues.push({ code, file: options.file, pointer, message });
  };
  checkIdentity(manifest, options, report);
  const compile = options.trusted === true ? lazySchema : options.ours === true ? compileOurSchema : compileSchema;
  const actions = compileActions(manifest, report, compile);
  const validateConfig = manifest.config ? compile(manifest.config, '/config', 'MANIFEST_CONFIG_SCHEMA_INVALID', report, configValidatorName(manifest.id)) : undefined;
  if (issues.length > 0) return { ok: false, issues };
  return { ok: true, value: { manifest, actions, validateConfig } };
}

type Report = (code: ErrorCode, pointer: string, message: string) => void;

function schemaIssue(issue: SchemaIssue, file: string): ManifestIssue {
  let code: ErrorCode = 'MANIFEST_FIELD_INVALID';
  if (issue.keyword === 'required') code = 'MANIFEST_FIELD_MISSING';
  else if (issue.keyword === 'additionalProperties') code = 'MANIFEST_FIELD_UNKNOWN';
  else if (issue.keyword === 'enum' && /\/effects\/\d+$/.test(issue.pointer)) code = 'MANIFEST_EFFECT_UNKNOWN';
  return { code, file, pointer: issue.pointer, message: issue.message };
}

/** semver (20-30 ms to load) is required by the first manifest not trusted: native ones skip its checks. */
const load = createRequire(import.meta.url);
let semverModule: typeof import('semver') | undefined;

function checkIdentity(manifest: PluginManifest, options: ValidateManifestOptions, report: Report): void {
  if (options.expectedId !== undefined && manifest.id !== options.expectedId) {
    report('MANIFEST_ID_MISMATCH', '/id', `id '${manifest.id}' must equal its file or folder name '${options.expectedId}'`);
  }
  if (options.trusted !== true) checkVersions(manifest, options, report);
  if (manifest.entry.split('/').some((segment) => segment === '..' || segment === '') || manifest.entry.startsWith('/')) {
    report('MANIFEST_ENTRY_INVALID', '/entry', `'${manifest.entry}' must be a relative path without '..' or empty segments`);
  }
  (manifest.provides ?? []).forEach((name, index) => {
    if (name.startsWith('core.')) report('MANIFEST_PROVIDES_RESERVED', `/provides/${index}`, `'${name}' is reserved for the kernel`);
  });
}

/**
 * The plugin's version and the kernel range it works with. Trusted (native) manifests skip them, as
 * they skip the schema: they ship with this kernel, and test/manifests/contract.test.ts checks them.
 */
function checkVersions(manifest: PluginManifest, options: ValidateManifestOptions, report: Report): void {
  const semver = (semverModule ??= load('semver') as typeof import('semver'));
  if (semver.valid(manifest.version) === null) {
    report('MANIFEST_VERSION_INVALID', '/version', `'${manifest.version}' is not a semantic version (e.g. 1.2.0)`);
  }
  const kernelVersion = options.kernelVersion ?? KERNEL_VERSION;
  if (semver.validRange(manifest.kernel) === null) {
    report('MANIFEST_KERNEL_RANGE_INVALID', '/kernel', `'${manifest.kernel}' is not a semver range (e.g. ^0.1.0)`);
  } else if (!semver.satisfies(kernelVersion, manifest.kernel, { includePrerelease: true })) {
    report('MANIFEST_KERNEL_INCOMPATIBLE', '/kernel', `kernel ${kernelVersion} is outside the plugin's range '${manifest.kernel}'`);
  }
}

/** `name`: the schema's precompiled validator, used for trusted manifests only. */
type Compile = (schema: object, pointer: string, code: ErrorCode, report: Report, name: string) => ValidateFunction | undefined;

function compileActions(manifest: PluginManifest, report: Report, compileSchema: Compile): CompiledAction[] {
  const compiled: CompiledAction[] = [];
  const seenTools = new Set<string>();
  const seenWireNames = new Map<string, string>();
  manifest.tools.forEach((tool, toolIndex) => {
    const toolPointer = `/tools/${toolIndex}`;
    if (seenTools.has(tool.name)) report('MANIFEST_WIRE_NAME_DUPLICATE', `${toolPointer}/name`, `tool '${tool.name}' is declared twice`);
    seenTools.add(tool.name);
    for (const [action, spec] of Object.entries(tool.actions)) {
      const pointer = `${toolPointer}/actions/${escapePointer(action)}`;
      const name = wireName(tool.name, action);
      if (!isValidWireName(name)) {
        report('MANIFEST_WIRE_NAME_INVALID', pointer, `wire name '${name}' must match ^[a-zA-Z0-9_-]{1,64}$`);
      }
      const previous = seenWireNames.get(name);
      if (previous !== undefined) report('MANIFEST_WIRE_NAME_DUPLICATE', pointer, `wire name '${name}' is also produced by ${previous}`);
      seenWireNames.set(name, pointer);
      if (spec.destructive === true && spec.effects.length === 0) {
        report('MANIFEST_EFFECTS_INCONSISTENT', `${pointer}/destructive`, 'an action with no effects only reads and cannot be destructive');
      }
      if (spec.input.type !== 'object') {
        report('MANIFEST_INPUT_SCHEMA_INVALID', `${pointer}/input/type`, "an action's input schema must have type 'object'");
      }
      const validateInput = compileSchema(spec.input, `${pointer}/input`, 'MANIFEST_INPUT_SCHEMA_INVALID', report, actionValidatorName(manifest.id, tool.name, action, 'input'));
      const validateOutput = spec.output ? compileSchema(spec.output, `${pointer}/output`, 'MANIFEST_INPUT_SCHEMA_INVALID', report, actionValidatorName(manifest.id, tool.name, action, 'output')) : undefined;
      if (validateInput) compiled.push({ tool: tool.name, action, wireName: name, spec, validateInput, validateOutput });
    }
  });
  return compiled;
}

function compileSchema(schema: object, pointer: string, code: ErrorCode, report: Report): ValidateFunction | undefined {
  return compileWith(getForeignSchemaAjv(), schema, pointer, code, report);
}

function compileOurSchema(schema: object, pointer: string, code: ErrorCode, report: Report): ValidateFunction | undefined {
  return compileWith(getPluginSchemaAjv(), schema, pointer, code, report);
}

function compileWith(ajv: ReturnType<typeof getPluginSchemaAjv>, schema: object, pointer: string, code: ErrorCode, report: Report): ValidateFunction | undefined {
  try {
    return ajv.compile(schema);
  } catch (error) {
    report(code, pointer, `schema does not compile: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
}

/**
 * A validator (of a trusted native manifest) that compiles its schema when first called, then behaves
 * as the compiled one; where the build generated its code (core/schema/precompiled.ts) and the schema
 * is still the one it was generated from, that code is used instead of compiling.
 */
function lazySchema(schema: object, _pointer: string, _code: ErrorCode, _report: Report, name: string): ValidateFunction {
  let compiled: ValidateFunction | undefined;
  const validate = function (this: unknown, data: unknown): boolean {
    compiled ??= loadPrecompiled(name, 'plugin', schema) ?? getPluginSchemaAjv().compile(schema);
    const valid = compiled.call(this, data);
    validate.errors = compiled.errors ?? null;
    return valid;
  } as ValidateFunction;
  validate.errors = null;
  validate.schema = schema;
  return validate;
}
