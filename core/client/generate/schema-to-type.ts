/**
 * A JSON Schema (the subset manifests and the route documentation use) as a TypeScript type, for the
 * generated client. What it cannot express (patterns, bounds) stays a runtime matter: the kernel
 * validates every body; the type only has to accept what the schema accepts.
 */
type Schema = { [keyword: string]: unknown };

export interface TypeContext {
  /** `#/components/schemas/Name` → the TypeScript name the file declares for it. */
  refName(ref: string): string;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

export function schemaToType(schema: unknown, context: TypeContext, indent = ''): string {
  if (schema === true || schema === undefined) return 'unknown';
  if (schema === false) return 'never';
  if (schema === null || typeof schema !== 'object') return 'unknown';
  const s = schema as Schema;
  if (typeof s.$ref === 'string') return context.refName(s.$ref);
  if ('const' in s) return literal(s.const);
  if (Array.isArray(s.enum)) return s.enum.map(literal).join(' | ') || 'never';
  for (const keyword of ['oneOf', 'anyOf'] as const) {
    const options = s[keyword];
    if (Array.isArray(options)) return union(options.map((option) => withBase(s, option, keyword)).map((option) => schemaToType(option, context, indent)));
  }
  if (Array.isArray(s.allOf)) return s.allOf.map((part) => `(${schemaToType(part, context, indent)})`).join(' & ') || 'unknown';
  const types = Array.isArray(s.type) ? s.type as string[] : typeof s.type === 'string' ? [s.type] : inferTypes(s);
  if (types.length === 0) return 'unknown';
  return union(types.map((type) => oneType(type, s, context, indent)));
}

function oneType(type: string, s: Schema, context: TypeContext, indent: string): string {
  switch (type) {
    case 'string': return 'string';
    case 'integer':
    case 'number': return 'number';
    case 'boolean': return 'boolean';
    case 'null': return 'null';
    case 'array': return arrayType(s, context, indent);
    case 'object': return objectType(s, context, indent);
    default: return 'unknown';
  }
}

function arrayType(s: Schema, context: TypeContext, indent: string): string {
  if (Array.isArray(s.prefixItems) && s.items === false) return `[${s.prefixItems.map((item) => schemaToType(item, context, indent)).join(', ')}]`;
  const item = schemaToType(s.items ?? true, context, indent);
  return /^[\w.$]+$/.test(item) ? `${item}[]` : `Array<${item}>`;
}

function objectType(s: Schema, context: TypeContext, indent: string): string {
  const properties = (s.properties ?? {}) as Record<string, unknown>;
  const required = new Set(Array.isArray(s.required) ? s.required as string[] : []);
  const inner = `${indent}  `;
  const lines: string[] = [];
  for (const [name, property] of Object.entries(properties)) {
    const description = (property as Schema | null)?.description;
    if (typeof description === 'string') lines.push(`${inner}/** ${description.replace(/\*\//g, '*\\/').replace(/\s+/g, ' ')} */`);
    lines.push(`${inner}${IDENTIFIER.test(name) ? name : JSON.stringify(name)}${required.has(name) ? '' : '?'}: ${schemaToType(property, context, inner)};`);
  }
  const extra = s.additionalProperties;
  if (extra !== false && !(Object.keys(properties).length > 0 && extra === undefined)) {
    lines.push(`${inner}[key: string]: ${extra === undefined || extra === true ? 'unknown' : `${schemaToType(extra, context, inner)} | undefined`};`);
  }
  return lines.length === 0 ? 'Record<string, never>' : `{\n${lines.join('\n')}\n${indent}}`;
}

/** A schema without `type` that still says what it is (by its keywords). */
function inferTypes(s: Schema): string[] {
  if (s.properties !== undefined || s.additionalProperties !== undefined || s.required !== undefined) return ['object'];
  if (s.items !== undefined || s.prefixItems !== undefined) return ['array'];
  return [];
}

/** `{ type: 'object', properties, oneOf: [{ required: [...] }] }`: the options refine the base. */
function withBase(base: Schema, option: unknown, keyword: string): unknown {
  if (option === null || typeof option !== 'object' || base.type === undefined && base.properties === undefined) return option;
  const rest: Schema = { ...base };
  delete rest[keyword];
  const extra = option as Schema;
  return {
    ...rest, ...extra,
    properties: { ...(rest.properties as object | undefined), ...(extra.properties as object | undefined) },
    required: [...(Array.isArray(rest.required) ? rest.required : []), ...(Array.isArray(extra.required) ? extra.required : [])],
  };
}

function union(types: string[]): string {
  const unique = [...new Set(types)];
  if (unique.includes('unknown')) return 'unknown';
  return unique.length === 1 ? unique[0]! : unique.join(' | ');
}

function literal(value: unknown): string {
  return value === null || ['string', 'number', 'boolean'].includes(typeof value) ? JSON.stringify(value) : 'unknown';
}
