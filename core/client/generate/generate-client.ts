import { schemaToType, type TypeContext } from './schema-to-type.js';

/** The parts of the OpenAPI document the generator reads. */
interface Document {
  paths: Record<string, Record<string, unknown>>;
  components: { schemas: Record<string, unknown> };
}

interface Operation {
  operationId: string;
  summary?: string;
  parameters?: { name: string; in: 'path' | 'query'; required?: boolean; schema: unknown }[];
  requestBody?: { required?: boolean; content: Record<string, { schema: unknown }> };
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
}

const HEADER = `/**
 * Generated from the kernel's OpenAPI document (GET /api/openapi.json) by \`npm run generate:client\`.
 * Do not edit: test/core/http/openapi.test.ts regenerates it and fails when it is out of step.
 */
/* eslint-disable */
`;

/** The TypeScript source of the client's types and operation table, from the document. */
export function generateClientSource(document: Document): string {
  const names = new Map(Object.keys(document.components.schemas).map((name) => [name, typeName(name)]));
  const context: TypeContext = {
    refName(ref) {
      const match = /^#\/components\/schemas\/([^/]+)$/.exec(ref);
      return match ? names.get(match[1]!) ?? 'unknown' : 'unknown';
    },
  };
  const out: string[] = [HEADER];
  for (const [name, schema] of Object.entries(document.components.schemas)) {
    out.push(`export type ${names.get(name)} = ${schemaToType(schema, context)};\n`);
  }
  const operations = [...Object.entries(document.paths)].flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]) => ({ path, method, operation: operation as Operation })))
    .sort((a, b) => a.operation.operationId.localeCompare(b.operation.operationId));
  out.push('/** Every operation: its path and query parameters, body, and the JSON answered on success. */');
  out.push('export interface Operations {');
  for (const { operation } of operations) out.push(operationType(operation, context));
  out.push('}\n');
  out.push('/** How each operation is called. */');
  out.push('export const OPERATIONS = {');
  for (const { path, method, operation } of operations) {
    out.push(`  ${key(operation.operationId)}: { method: '${method.toUpperCase()}', path: '${path}' },`);
  }
  out.push('} as const;\n');
  return `${out.join('\n')}`;
}

function operationType(operation: Operation, context: TypeContext): string {
  const fields: string[] = [];
  if (operation.summary) fields.push(`    /** ${operation.summary.replace(/\*\//g, '*\\/')} */`);
  const inPath = (operation.parameters ?? []).filter((parameter) => parameter.in === 'path');
  const inQuery = (operation.parameters ?? []).filter((parameter) => parameter.in === 'query');
  if (inPath.length > 0) fields.push(`    params: { ${inPath.map((parameter) => `${key(parameter.name)}: string`).join('; ')} };`);
  if (inQuery.length > 0) fields.push(`    query: { ${inQuery.map((parameter) => `${key(parameter.name)}?: ${schemaToType(parameter.schema, context)}`).join('; ')} };`);
  const body = operation.requestBody?.content['application/json'];
  if (body) fields.push(`    body: ${schemaToType(body.schema, context, '    ')};`);
  const success = Object.entries(operation.responses).filter(([status]) => status.startsWith('2'));
  const json = success.map(([, response]) => response.content?.['application/json']).filter((content) => content !== undefined);
  const streams = success.some(([, response]) => Object.keys(response.content ?? {}).some((type) => type !== 'application/json'));
  fields.push(`    response: ${json.length > 0 ? json.map((content) => schemaToType(content.schema, context, '    ')).join(' | ') : streams ? 'string' : 'void'};`);
  return `  ${key(operation.operationId)}: {\n${fields.join('\n')}\n  };`;
}

function typeName(name: string): string {
  return name.split(/[^A-Za-z0-9]+/).filter(Boolean).map((part) => part[0]!.toUpperCase() + part.slice(1)).join('');
}

function key(name: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : JSON.stringify(name);
}
