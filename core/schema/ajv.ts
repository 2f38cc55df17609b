import { createRequire } from 'node:module';
import type { Ajv, ErrorObject, Options, ValidateFunction } from 'ajv';
import type formatsModule from 'ajv-formats';

/**
 * ajv and ajv-formats (some 100 CommonJS modules, 50-90 ms) are loaded by the first instance made,
 * not at import: a start whose validators were all generated at build time (precompiled.ts) needs none.
 */
const load = createRequire(import.meta.url);
let ajvClass: typeof Ajv | undefined;
let addFormats: typeof formatsModule.default | undefined;

const BASE_OPTIONS: Options = {
  allErrors: true,
  strictSchema: true,
  strictTypes: false,
  strictTuples: false,
  allowUnionTypes: true,
  // Plugins may reuse $id values; schemas are compiled one by one and never looked up by id.
  addUsedSchema: false,
};

/** The options of the instance for the kernel's own schemas (`getKernelAjv`). */
export const KERNEL_AJV_OPTIONS: Options = {};
/** The options of the instance for plugins' schemas: defaults applied, so handlers see the values the schema promises. */
export const PLUGIN_AJV_OPTIONS: Options = { useDefaults: true };

/** A new ajv instance with the kernel's options and the standard formats. */
export function createAjv(options: Options = {}): Ajv {
  ajvClass ??= (load('ajv') as { Ajv: typeof Ajv }).Ajv;
  // ajv-formats is CommonJS: its `default` is the plugin function.
  addFormats ??= (load('ajv-formats') as typeof formatsModule).default;
  const ajv = new ajvClass({ ...BASE_OPTIONS, ...options });
  addFormats(ajv);
  return ajv;
}

let kernelAjv: Ajv | undefined;

/**
 * The one instance for the schemas the kernel itself owns (quire.json, manifests, grants.json, route
 * bodies), made on first use: each instance compiles the JSON Schema meta-schema before its first
 * schema (30-40 ms at start), so sharing it pays that once. Same options as `createAjv()`.
 */
export function getKernelAjv(): Ajv {
  kernelAjv ??= createAjv(KERNEL_AJV_OPTIONS);
  return kernelAjv;
}

/** One problem in a value, with the JSON pointer of the offending part. */
export interface SchemaIssue {
  pointer: string;
  keyword: string;
  message: string;
}

export type Validated<T> = { ok: true; value: T } | { ok: false; issues: SchemaIssue[] };

const MAX_REPORTED_ISSUES = 50;

/** Turns ajv's errors into pointers a person can follow: a missing field points at the field itself. */
export function toSchemaIssues(errors: readonly ErrorObject[] | null | undefined): SchemaIssue[] {
  if (!errors) return [];
  const issues = errors.slice(0, MAX_REPORTED_ISSUES).map((error): SchemaIssue => {
    const params = error.params as Record<string, unknown>;
    // A key whose name is not allowed (an action named `Write-Tmp`): ajv reports where the map is, and
    // the name only in its params; pointed at the key itself and named (with nine actions, which one?).
    const name = (error as ErrorObject & { propertyName?: unknown }).propertyName ?? params.propertyName;
    if (typeof name === 'string') {
      return { pointer: `${error.instancePath}/${escapePointer(name)}`, keyword: error.keyword, message: error.keyword === 'propertyNames' ? `the name '${name}' is not allowed here` : `the name '${name}' ${error.message ?? 'is invalid'}` };
    }
    if (error.keyword === 'required') {
      const field = String(params.missingProperty);
      return { pointer: `${error.instancePath}/${escapePointer(field)}`, keyword: 'required', message: `'${field}' is required` };
    }
    if (error.keyword === 'additionalProperties') {
      const field = String(params.additionalProperty);
      return { pointer: `${error.instancePath}/${escapePointer(field)}`, keyword: 'additionalProperties', message: `'${field}' is not an allowed field` };
    }
    if (error.keyword === 'enum') {
      const allowed = (params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ');
      return { pointer: error.instancePath, keyword: 'enum', message: `must be one of ${allowed}` };
    }
    return { pointer: error.instancePath, keyword: error.keyword, message: error.message ?? 'is invalid' };
  });
  // ajv adds "property name must be valid" after the name's own error: said once.
  return issues.filter((issue) => issue.keyword !== 'propertyNames' || !issues.some((other) => other !== issue && other.pointer === issue.pointer));
}

/** Runs a compiled validator and returns a result union instead of ajv's side-channel errors. */
export function runValidator<T>(validate: ValidateFunction, value: unknown): Validated<T> {
  if (validate(value)) return { ok: true, value: value as T };
  return { ok: false, issues: toSchemaIssues(validate.errors) };
}

export function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

export function formatIssues(issues: readonly SchemaIssue[]): string {
  return issues.map((issue) => `${issue.pointer || '/'}: ${issue.message}`).join('; ');
}
