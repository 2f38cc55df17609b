import type { RegisteredAction } from '../../registry/action-registry.js';
import { HTTP_STATUS } from '../status-table.js';
import { COMPONENT_SCHEMAS } from './component-schemas.js';
import type { JsonSchema, OpenApiDocument, RouteDoc } from './openapi-types.js';
import { ROUTE_DOCS } from './route-docs.js';

/** Errors any route behind the token may answer, whatever it does. */
const COMMON_ERRORS = ['INVALID_INPUT', 'INVALID_JSON', 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE', 'UNAUTHENTICATED', 'ORIGIN_REFUSED', 'INTERNAL'];
/** And the errors every action may answer on top (the pipeline's), beside those of its route. */
const ACTION_ERRORS = ['FORBIDDEN', 'ACTION_NOT_FOUND', 'ACTION_DENIED', 'WORKSPACE_READ_ONLY', 'NOT_FOUND', 'CONFLICT', 'ACTION_TIMEOUT', 'ACTION_CANCELLED', 'DISK_FULL', 'NOT_READY', 'MODEL_UNAVAILABLE', 'PLUGIN_ERROR'];

export interface DocumentSource {
  version: string;
  /** The callable actions now (a plugin enabled or disabled while serving changes the document). */
  actions: readonly RegisteredAction[];
}

/**
 * The OpenAPI 3.1 document of what this kernel serves now: the core routes (route-docs.ts, whose
 * bodies are the routes' own schemas) and one path per action, from its manifest: the input schema,
 * the output schema when declared, the effects (`x-quire-effects`), and who may call it.
 */
export function buildOpenApiDocument(source: DocumentSource): OpenApiDocument {
  const schemas: Record<string, JsonSchema> = { ...COMPONENT_SCHEMAS };
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of ROUTE_DOCS) (paths[route.path] ??= {})[route.method] = routeOperation(route);
  const callable = source.actions.filter((action) => action.spec.agentOnly !== true);
  for (const action of [...callable].sort((a, b) => a.wireName.localeCompare(b.wireName))) {
    paths[`/api/actions/${action.pluginId}/${action.tool}/${action.action}`] = { post: actionOperation(action, schemas) };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Quire kernel',
      version: source.version,
      description: 'The local kernel of a Quire workspace. Every `/api` route and `/mcp` needs `Authorization: Bearer <token>`, but this document and `/api/docs` (no notes, no secrets); '
        + 'a token\'s role is `reader` (actions without effects) or `admin`. Errors are `{ error: { code, message, details } }` with the status of their code.',
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    tags: [
      { name: 'kernel', description: 'The kernel itself' },
      { name: 'plugins', description: 'Plugins and their state' },
      { name: 'actions', description: 'Every action of every active plugin, through the same gate as the agent' },
      { name: 'gate', description: 'Grants, confirmations, usage and privacy: what limits the agent' },
      { name: 'jobs', description: 'Long actions' },
      { name: 'agent', description: 'Agent sessions and turns' },
      { name: 'mcp', description: 'The Model Context Protocol, and external MCP servers' },
    ],
    paths,
    components: {
      schemas,
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'A token from quire.json (auth.tokens) or the one printed at start' } },
      responses: Object.fromEntries(Object.keys(HTTP_STATUS).map((code) => [code, errorResponse(code)])),
    },
    'x-quire-error-statuses': { ...HTTP_STATUS },
  };
}

function routeOperation(route: RouteDoc): Record<string, unknown> {
  const parameters = [
    ...[...route.path.matchAll(/\{(\w+)\}/g)].map((match) => ({ name: match[1], in: 'path', required: true, schema: { type: 'string' } })),
    ...(route.query ?? []).map((parameter) => ({ name: parameter.name, in: 'query', required: false, description: parameter.description, schema: parameter.schema })),
  ];
  const responses: Record<string, unknown> = {};
  for (const [status, response] of Object.entries(route.responses)) {
    responses[status] = {
      description: response.description,
      ...(response.headers ? { headers: response.headers } : {}),
      ...(response.schema ? { content: Object.fromEntries([response.mediaType ?? 'application/json'].flat().map((type) => [type, { schema: response.schema }])) } : {}),
    };
  }
  // Public routes still pass the request guard (Host, Origin, a repeated Host).
  const errors = route.role === 'public' ? ['INVALID_INPUT', 'ORIGIN_REFUSED', ...(route.errors ?? [])] : [...COMMON_ERRORS, ...(route.role === 'admin' ? ['FORBIDDEN'] : []), ...(route.errors ?? [])];
  Object.assign(responses, errorResponses(errors));
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    tags: [route.tag],
    ...(route.role === 'public' ? { security: [] } : {}),
    'x-quire-role': route.role,
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(route.body ? { requestBody: { required: route.method !== 'post' || route.body.required !== undefined, content: { 'application/json': { schema: route.body } } } } : {}),
    responses,
  };
}

function actionOperation(action: RegisteredAction, schemas: Record<string, JsonSchema>): Record<string, unknown> {
  const inputName = `${action.wireName}_input`;
  schemas[inputName] = componentSchema(action.spec.input, inputName);
  const result: JsonSchema = action.spec.output ? { $ref: `#/components/schemas/${action.wireName}_output` } : {};
  if (action.spec.output) schemas[`${action.wireName}_output`] = componentSchema(action.spec.output, `${action.wireName}_output`);
  const role = action.effects.length > 0 || action.spec.adminOnly === true ? 'admin' : 'reader';
  const responses: Record<string, unknown> = {
    200: { description: 'The result', content: { 'application/json': { schema: { type: 'object', required: ['result'], properties: { result } } } } },
    ...(action.spec.long === true
      ? { 202: { description: 'Started as a job (send `Prefer: wait=<seconds>` to wait for it)', headers: { Location: { description: 'The job', schema: { type: 'string' } } }, content: { 'application/json': { schema: { type: 'object', required: ['job'], properties: { job: { $ref: '#/components/schemas/Job' } } } } } } }
      : {}),
    // An action that reaches out (dataEgress) may find the server it fetches from failing: 502, or 504 for no answer.
    ...errorResponses([...COMMON_ERRORS, ...ACTION_ERRORS, ...(action.effects.includes('dataEgress') ? ['UPSTREAM_FAILED', 'UPSTREAM_TIMEOUT'] : [])]),
  };
  return {
    operationId: action.wireName,
    summary: firstSentence(action.spec.description),
    description: action.spec.description,
    tags: ['actions'],
    'x-quire-plugin': action.pluginId,
    'x-quire-effects': [...action.effects],
    'x-quire-declared-effects': [...action.declaredEffects],
    'x-quire-role': role,
    'x-quire-destructive': action.spec.destructive === true,
    'x-quire-idempotent': action.spec.idempotent === true,
    'x-quire-long': action.spec.long === true,
    'x-quire-person-only': action.spec.personOnly === true,
    requestBody: { required: true, content: { 'application/json': { schema: { $ref: `#/components/schemas/${inputName}` } } } },
    responses,
  };
}

/** A status per code group: `default` would hide which codes a route answers. */
function errorResponses(codes: readonly string[]): Record<string, unknown> {
  const byStatus = new Map<number, string[]>();
  for (const code of new Set(codes)) {
    const status = HTTP_STATUS[code as keyof typeof HTTP_STATUS];
    if (status === undefined) throw new Error(`route documentation names an unknown error code '${code}'`);
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries([...byStatus].map(([status, group]) => [status, {
    description: `Error: ${group.join(', ')}`,
    'x-quire-error-codes': group,
    content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } },
  }]));
}

function errorResponse(code: string): Record<string, unknown> {
  return { description: `${code} (${HTTP_STATUS[code as keyof typeof HTTP_STATUS]})`, content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } } };
}

/**
 * A plugin's schema moved under components: its own local references (`#/definitions/x`) must point
 * into it there, and its `$id` would change what they resolve against.
 */
function componentSchema(schema: JsonSchema, name: string): JsonSchema {
  const rewrite = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(rewrite);
    if (value === null || typeof value !== 'object') return value;
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) {
      if (key === '$id' || key === '$schema') continue;
      out[key] = key === '$ref' && typeof inner === 'string' && inner.startsWith('#/') ? `#/components/schemas/${name}/${inner.slice(2)}` : rewrite(inner);
    }
    return out;
  };
  return rewrite(schema) as JsonSchema;
}

function firstSentence(text: string): string {
  const end = text.search(/\.(\s|$)/);
  return (end === -1 ? text : text.slice(0, end + 1)).slice(0, 200);
}
