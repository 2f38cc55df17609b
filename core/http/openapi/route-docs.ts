import { CONFIRMATION_ANSWER_BODY } from '../routes/confirmations.js';
import { NEW_GRANT_BODY } from '../routes/grants.js';
import { APPROVE_TOOL_BODY } from '../routes/mcp-servers.js';
import { PLUGIN_ENABLED_BODY } from '../routes/plugins.js';
import {
  MODE_BODY, NEW_SESSION_BODY, QUESTION_ANSWERS_BODY, ROLLBACK_BODY, SAVE_SESSION_BODY, SESSION_CONFIRMATION_ANSWER_BODY, TURN_BODY,
} from '../routes/sessions.js';
import { TURN_EVENT_TYPES } from './component-schemas.js';
import type { DocumentedResponse, JsonSchema, QueryParameter, RouteDoc } from './openapi-types.js';

/**
 * Every route of `createHttpApp` but the per-action ones (those come from the manifests), with the
 * body schemas the routes validate with. `test/core/http/openapi.test.ts` walks the Hono app and fails
 * on a route missing here or described here and not served.
 */
const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
const listOf = (name: string): JsonSchema => ({ type: 'array', items: ref(name) });
const object = (properties: Record<string, JsonSchema>, required = Object.keys(properties)): JsonSchema => ({ type: 'object', required, properties });
const ok = (schema: JsonSchema, description = 'OK'): Record<number, DocumentedResponse> => ({ 200: { description, schema } });
const events = (description: string, names: readonly string[]): DocumentedResponse => ({
  description: `${description} Events: ${names.join(', ')}; each event's data is JSON.`,
  mediaType: 'text/event-stream',
  schema: { type: 'string' },
});
const query = (name: string, description: string, schema: JsonSchema = { type: 'string' }): QueryParameter => ({ name, description, schema });

const job = object({ job: ref('Job') });
const confirmation = object({ confirmation: ref('Confirmation') });

const HEALTH: RouteDoc[] = [
  { method: 'get', path: '/healthz', operationId: 'health', summary: 'Whether the kernel answers, and its version', tag: 'kernel', role: 'public',
    query: [query('challenge', 'A local client\'s random challenge (16-128 of A-Z a-z 0-9 _ -): answered with `proof`')],
    responses: ok(object({ ok: { type: 'boolean' }, version: { type: 'string' }, instance: { type: 'string', description: 'this boot of the kernel (serve.json names it)' }, proof: { type: 'string', description: 'HMAC-SHA256 of the challenge under the boot key serve.json holds, base64url (only when challenged)' } }, ['ok', 'version', 'instance'])) },
  { method: 'get', path: '/api/openapi.json', operationId: 'openApiDocument', summary: 'This document', tag: 'kernel', role: 'public', responses: ok({ type: 'object', required: ['openapi', 'paths'] }) },
  { method: 'get', path: '/api/docs', operationId: 'apiReference', summary: 'A readable API reference (Swagger UI) over this document', tag: 'kernel', role: 'public', responses: { 200: { description: 'The page', mediaType: 'text/html', schema: { type: 'string' } } } },
  { method: 'get', path: '/api/docs/assets/swagger-ui-dist/{file}', operationId: 'apiReferenceAsset', summary: "The reference page's scripts and styles, served by the kernel (no CDN)", tag: 'kernel', role: 'public', responses: { 200: { description: 'The file', mediaType: ['text/javascript', 'text/css'], schema: { type: 'string' } } }, errors: ['NOT_FOUND'] },
];

const WEB: RouteDoc[] = [
  { method: 'get', path: '/', operationId: 'webApp', summary: 'The web app', tag: 'kernel', role: 'public', responses: { 200: { description: 'Its page', mediaType: 'text/html', schema: { type: 'string' } }, 503: { description: 'Not built', mediaType: 'text/plain', schema: { type: 'string' } } } },
  { method: 'get', path: '/app/assets/{file}', operationId: 'webAppAsset', summary: "The web app's scripts and styles (hashed names, cached for good)", tag: 'kernel', role: 'public', responses: { 200: { description: 'The file', mediaType: ['text/javascript', 'text/css'], schema: { type: 'string' } } }, errors: ['NOT_FOUND'] },
  { method: 'get', path: '/api/assets/{name}', operationId: 'getAsset', summary: "A workspace attachment (assets/<name>: a note's image or file)", tag: 'kernel', role: 'admin', responses: { 200: { description: 'The file, inert (sandboxed, not sniffed); other types than images and PDF as application/octet-stream', mediaType: ['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/avif', 'image/bmp', 'application/pdf', 'application/octet-stream'], schema: { type: 'string' } } }, errors: ['NOT_FOUND'] },
];

const PLUGINS: RouteDoc[] = [
  { method: 'get', path: '/api/me', operationId: 'me', summary: 'Who this token is: its name and role', tag: 'kernel', role: 'reader', responses: ok(object({ kind: { type: 'string' }, name: { type: 'string' }, role: { type: 'string', enum: ['admin', 'reader'] } })) },
  {
    method: 'get', path: '/api/plugins', operationId: 'listPlugins', summary: 'Every plugin found, its state and the effects of each action', tag: 'plugins', role: 'reader',
    description: 'Administrators also see each plugin file, problems, processes and configProblems.',
    responses: ok({ type: 'object', required: ['plugins', 'backends'], properties: { plugins: listOf('Plugin'), backends: listOf('Backend'), configProblems: { type: 'array' } } }),
  },
  { method: 'put', path: '/api/plugins/{id}', operationId: 'setPluginEnabled', summary: 'Enable or disable a plugin while serving', tag: 'plugins', role: 'admin', body: PLUGIN_ENABLED_BODY, responses: ok(object({ plugin: ref('Plugin') })), errors: ['NOT_FOUND', 'CONFLICT'] },
  {
    method: 'post', path: '/api/actions/{plugin}/{tool}/{action}', operationId: 'callAction', summary: 'Call any action by its path (each one is also listed on its own path)', tag: 'actions', role: 'reader',
    body: { type: 'object', description: "The action's input (see its own path)" },
    responses: {
      200: { description: 'The result', schema: object({ result: {} }) },
      202: { description: 'A long action started as a job; `Location` is the job', schema: job, headers: { Location: { description: 'The job: /api/jobs/{id}', schema: { type: 'string' } } } },
    },
    errors: ['ACTION_NOT_FOUND', 'FORBIDDEN', 'ACTION_DENIED', 'WORKSPACE_READ_ONLY', 'NOT_FOUND', 'CONFLICT', 'ACTION_TIMEOUT', 'DISK_FULL', 'PLUGIN_ERROR'],
  },
];

const GATE: RouteDoc[] = [
  {
    method: 'get', path: '/api/usage', operationId: 'usage', summary: 'Model and backend usage, priced, with the budgets', tag: 'gate', role: 'admin',
    query: [query('by', 'Grouping', { type: 'string', enum: ['day', 'session', 'model'] }), query('since', 'First day, YYYY-MM-DD'), query('until', 'Day after the last, YYYY-MM-DD'), query('session', 'One session')],
    responses: ok(object({ by: { type: 'string' }, rows: listOf('UsageRow'), total: ref('UsageRow'), budgets: { type: 'object' } })),
  },
  {
    method: 'get', path: '/api/gate', operationId: 'gate', summary: 'What limits the agent: deny rules, auto mode, grants, notebook privacy', tag: 'gate', role: 'admin',
    responses: ok(object({ allowAutoMode: { type: 'boolean' }, deny: { type: 'array' }, grants: { type: 'integer' }, notebooks: listOf('NotebookPrivacy') })),
  },
  { method: 'get', path: '/api/grants', operationId: 'listGrants', summary: 'Standing grants', tag: 'gate', role: 'admin', responses: ok(object({ grants: listOf('Grant') })) },
  { method: 'post', path: '/api/grants', operationId: 'createGrant', summary: 'Grant an action ahead of time', tag: 'gate', role: 'admin', body: NEW_GRANT_BODY, responses: { 201: { description: 'Created', schema: object({ grant: ref('Grant') }) } }, errors: ['ACTION_NOT_FOUND'] },
  { method: 'delete', path: '/api/grants/{id}', operationId: 'revokeGrant', summary: 'Revoke a grant', tag: 'gate', role: 'admin', responses: ok(object({ revoked: {} })), errors: ['GRANT_NOT_FOUND'] },
  {
    method: 'get', path: '/api/confirmations', operationId: 'listConfirmations', summary: 'Confirmations, by status', tag: 'gate', role: 'admin',
    query: [query('status', 'Only these', { type: 'string', enum: ['pending', 'approved', 'rejected', 'consumed', 'expired'] })],
    responses: ok(object({ confirmations: listOf('Confirmation') })),
  },
  { method: 'get', path: '/api/confirmations/{id}', operationId: 'getConfirmation', summary: 'One confirmation', tag: 'gate', role: 'admin', responses: ok(confirmation), errors: ['CONFIRMATION_NOT_FOUND'] },
  {
    method: 'post', path: '/api/confirmations/{id}/answer', operationId: 'answerConfirmation', summary: 'Answer a confirmation once, for the arguments shown', tag: 'gate', role: 'admin',
    body: CONFIRMATION_ANSWER_BODY, responses: ok(confirmation),
    errors: ['CONFIRMATION_NOT_FOUND', 'CONFIRMATION_ALREADY_ANSWERED', 'CONFIRMATION_ARGS_MISMATCH'],
  },
];

const AUDIT: RouteDoc[] = [
  {
    method: 'get', path: '/api/audit', operationId: 'auditLog', summary: 'The audit log, newest first, filtered and in pages', tag: 'gate', role: 'admin',
    query: [
      query('outcome', 'Only these', { type: 'string', enum: ['ok', 'error', 'refused', 'egress_denied'] }), query('plugin', 'Only this plugin'),
      query('principal', 'Only this caller: a name (alice, mcp:claude) or a kind (person, agent, mcp)'), query('action', 'An action name, or plugin/tool/action'),
      query('before', 'The seq to continue below (next, from the last page)', { type: 'integer', minimum: 1 }), query('limit', 'Records per page (at most 500)', { type: 'integer', minimum: 1, maximum: 500 }),
    ],
    responses: ok({ type: 'object', required: ['records'], properties: { records: listOf('AuditRecord'), next: { type: 'integer', description: 'before= for the next page; absent at the start of the log' } } }),
  },
  { method: 'post', path: '/api/audit/verify', operationId: 'verifyAudit', summary: 'Walk the whole chain: whether and where it was altered', tag: 'gate', role: 'admin', responses: ok(object({ verification: { type: 'object', required: ['ok', 'lines'], properties: { ok: { type: 'boolean' }, lines: { type: 'integer' }, line: { type: 'integer' }, reason: { type: 'string' } } } })) },
];

const JOBS: RouteDoc[] = [
  {
    method: 'get', path: '/api/jobs', operationId: 'listJobs', summary: 'Long actions, running and ended, newest first, in pages', tag: 'jobs', role: 'admin',
    query: [
      query('state', 'Only these', { type: 'string', enum: ['running', 'ended'] }), query('before', 'The job id to go on below (next, from the last page)'),
      query('limit', 'Jobs per page (50; at most 200)', { type: 'integer', minimum: 1, maximum: 200 }),
      query('results', "false: each job's result left out (GET /api/jobs/{id} has it)", { type: 'string', enum: ['true', 'false'] }),
    ],
    responses: ok({ type: 'object', required: ['jobs'], properties: { jobs: listOf('Job'), next: { type: 'string', description: 'before= for the next page; absent on the last' } } }),
  },
  { method: 'get', path: '/api/jobs/{id}', operationId: 'getJob', summary: "One job's record", tag: 'jobs', role: 'admin', responses: ok(job), errors: ['JOB_NOT_FOUND'] },
  { method: 'post', path: '/api/jobs/{id}/cancel', operationId: 'cancelJob', summary: 'Stop a job at its next safe point', tag: 'jobs', role: 'admin', responses: ok(object({ job: ref('Job'), cancelling: { type: 'boolean' } })), errors: ['JOB_NOT_FOUND'] },
  { method: 'get', path: '/api/jobs/{id}/events', operationId: 'jobEvents', summary: "A job's record, its progress, and its end", tag: 'jobs', role: 'admin', responses: { 200: events('Server-sent events; data is { job }.', ['job', 'progress', 'end']) }, errors: ['JOB_NOT_FOUND'] },
];

const SESSIONS: RouteDoc[] = [
  { method: 'post', path: '/api/agent/sessions', operationId: 'createSession', summary: 'A new agent session', tag: 'agent', role: 'admin', body: NEW_SESSION_BODY, responses: { 201: { description: 'Created', schema: ref('SavedSession') } } },
  {
    method: 'get', path: '/api/agent/sessions', operationId: 'listSessions', summary: 'Sessions, newest first', tag: 'agent', role: 'admin',
    query: [query('page', 'From 1', { type: 'integer', minimum: 1 }), query('pageSize', 'Sessions per page', { type: 'integer', minimum: 1 }), query('title', 'Titles containing this')],
    responses: ok(object({ total: { type: 'integer' }, sessions: listOf('SessionSummary') })),
  },
  {
    method: 'get', path: '/api/agent/sessions/{id}', operationId: 'getSession', summary: 'A session, with its running turn folded in', tag: 'agent', role: 'admin',
    query: [
      query('entriesFrom', 'Only the entries from this index on (with revision): the answer may start earlier, at entriesFrom', { type: 'integer', minimum: 0 }),
      query('revision', 'The revision of the entries the client holds: at another, the answer starts at 0 (or as tail says)', { type: 'integer', minimum: 0 }),
      query('tail', 'Only about the last this many entries, from the person\'s message that began their turn; with entriesFrom and revision, what is answered when the revision is another', { type: 'integer', minimum: 1 }),
    ],
    responses: ok(object({
      session: ref('Session'), entriesFrom: { type: 'integer' }, entryCount: { type: 'integer' },
      todos: { type: 'array', description: 'The agent\'s task list as it stands, when the entries answered start after the first', items: object({ content: { type: 'string' }, status: { type: 'string', enum: ['pending', 'in_progress', 'completed', 'cancelled'] } }, ['content', 'status']) },
    }, ['session'])), errors: ['NOT_FOUND'],
  },
  { method: 'put', path: '/api/agent/sessions/{id}', operationId: 'saveSession', summary: 'Save a session at a revision (409 with the current one on a conflict)', tag: 'agent', role: 'admin', body: SAVE_SESSION_BODY, responses: ok(ref('SavedSession')), errors: ['CONFLICT'] },
  { method: 'delete', path: '/api/agent/sessions/{id}', operationId: 'deleteSession', summary: 'Delete a session (409 while a turn runs)', tag: 'agent', role: 'admin', responses: { 204: { description: 'Deleted' } }, errors: ['NOT_FOUND', 'CONFLICT'] },
  {
    method: 'get', path: '/api/agent/sessions/{id}/preview', operationId: 'previewRequest', summary: 'What the next model request would send, without sending it', tag: 'agent', role: 'admin',
    query: [query('message', "The person's next message")], responses: ok(object({ preview: { type: 'object' } })), errors: ['NOT_FOUND', 'MODEL_UNAVAILABLE'],
  },
  {
    method: 'post', path: '/api/agent/sessions/{id}/turns', operationId: 'startTurn', summary: "Send the person's message; the turn streams back", tag: 'agent', role: 'admin',
    body: TURN_BODY, responses: { 200: events('Server-sent events of the turn, in order.', TURN_EVENT_TYPES) }, errors: ['NOT_FOUND', 'CONFLICT', 'MODEL_UNAVAILABLE', 'NOT_READY'],
  },
  { method: 'post', path: '/api/agent/sessions/{id}/turns/{turnId}/rollback', operationId: 'rollbackTurn', summary: "Undo a turn's writes to the notes", tag: 'agent', role: 'admin', body: ROLLBACK_BODY,
    responses: ok({
      type: 'object', required: ['revision', 'mode', 'conflicts'],
      properties: {
        revision: { type: 'integer' }, mode: { type: 'string', enum: ['restore', 'blocks'], description: 'restore: the turn\'s snapshot put back whole; blocks: only the blocks it changed' },
        conflicts: { type: 'array', description: 'blocks changed since by someone else, left as they are unless force', items: { type: 'object', required: ['path'], properties: { path: { type: 'string' }, id: { type: 'string' } } } },
        undone: { type: 'array' },
      },
    }),
    errors: ['NOT_FOUND', 'CONFLICT', 'ACTION_NOT_FOUND'] },
  {
    method: 'post', path: '/api/agent/sessions/{id}/turns/cancel', operationId: 'cancelTurn', summary: 'Stop the running turn, and say which calls it stopped', tag: 'agent', role: 'admin',
    query: [query('turn', 'Stop only this turn: another running in the session is left alone (cancelled false, reason another_turn)')],
    responses: ok({ type: 'object', required: ['cancelled'], properties: { cancelled: { type: 'boolean' }, turnID: { type: 'string' }, running: { type: 'object' }, reason: { type: 'string', enum: ['rollback', 'another_turn'], description: 'Why nothing was cancelled: a rollback holds the session (it is not stopped), or another turn runs' } } }),
  },
  { method: 'get', path: '/api/agent/sessions/{id}/pending', operationId: 'pendingInSession', summary: 'Confirmations and questions waiting in a session', tag: 'agent', role: 'admin', responses: ok(object({ confirmations: listOf('Confirmation'), questions: listOf('Question') })), errors: ['NOT_FOUND'] },
  {
    method: 'post', path: '/api/agent/sessions/{id}/confirmations/{confirmationId}/answer', operationId: 'answerSessionConfirmation', summary: "Answer one of the session's confirmations", tag: 'agent', role: 'admin',
    body: SESSION_CONFIRMATION_ANSWER_BODY, responses: ok(confirmation), errors: ['CONFIRMATION_NOT_FOUND', 'CONFIRMATION_ALREADY_ANSWERED', 'CONFIRMATION_ARGS_MISMATCH'],
  },
  { method: 'post', path: '/api/agent/sessions/{id}/questions/{questionId}/answer', operationId: 'answerQuestion', summary: "Answer the agent's question", tag: 'agent', role: 'admin', body: QUESTION_ANSWERS_BODY, responses: ok(object({ answered: { type: 'boolean' } })), errors: ['NOT_FOUND', 'CONFLICT'] },
  { method: 'put', path: '/api/agent/sessions/{id}/mode', operationId: 'setSessionMode', summary: 'Ask before effects (confirm) or not (auto, if allowed)', tag: 'agent', role: 'admin', body: MODE_BODY, responses: ok(object({ mode: { type: 'string', enum: ['confirm', 'auto'] } })), errors: ['NOT_FOUND'] },
];

/** A JSON-RPC error answer, as the MCP transport sends one. */
const JSON_RPC_ERROR: JsonSchema = {
  type: 'object', required: ['jsonrpc', 'error'],
  properties: { jsonrpc: { type: 'string' }, id: {}, error: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'integer' }, message: { type: 'string' } } } },
};

/** What /mcp answers, by method (the transport's statuses, each a JSON-RPC error but 200, 202 and 503). */
function mcpResponses(method: 'post' | 'get' | 'delete'): Record<number, DocumentedResponse> {
  const error = (description: string): DocumentedResponse => ({ description, mediaType: 'application/json', schema: JSON_RPC_ERROR });
  const responses: Record<number, DocumentedResponse> = {
    200: method === 'post'
      ? { description: 'The JSON-RPC answer, as JSON or as an event stream', mediaType: ['application/json', 'text/event-stream'], schema: { type: 'string' } }
      : method === 'get' ? { description: "The session's notification stream", mediaType: 'text/event-stream', schema: { type: 'string' } } : { description: 'The session is closed', mediaType: 'application/json', schema: { type: 'object' } },
    404: error("No such session (unknown, closed, expired, or another token's)"),
  };
  if (method === 'post') {
    responses[202] = { description: 'A notification or a response, accepted (no body)' };
    responses[503] = { description: 'Every session slot (mcp.maxSessions) is answering a request: no session could be opened (Retry-After says when to try again)', mediaType: 'application/json', schema: { type: 'object' } };
  }
  if (method !== 'delete') responses[406] = error('The Accept header does not name the answer types (JSON and an event stream for POST, an event stream for GET)');
  if (method === 'get') responses[409] = error('The session already has its notification stream');
  return responses;
}

const MCP: RouteDoc[] = [
  { method: 'get', path: '/api/mcp/servers', operationId: 'listMcpServers', summary: 'External MCP servers, their tools, and definitions waiting for approval', tag: 'mcp', role: 'admin', responses: ok(object({ servers: listOf('McpServer') })) },
  { method: 'post', path: '/api/mcp/servers/{name}/tools/{tool}/approve', operationId: 'approveMcpTool', summary: 'Approve the definition shown (its hash) of an external tool', tag: 'mcp', role: 'admin', body: APPROVE_TOOL_BODY, responses: ok(object({ server: ref('McpServer') })), errors: ['NOT_FOUND', 'CONFLICT'] },
  ...(['post', 'get', 'delete'] as const).map((method): RouteDoc => ({
    method, path: '/mcp', operationId: `mcp${method[0]!.toUpperCase()}${method.slice(1)}`, summary: 'The Model Context Protocol, Streamable HTTP transport (JSON-RPC)', tag: 'mcp', role: 'admin',
    description: 'The protocol version is negotiated at initialize (the newest the SDK knows, older ones accepted). Other methods answer 405.',
    ...(method === 'post' ? { body: { type: ['object', 'array'], description: 'A JSON-RPC message; a batch (an array, at most 20) only under protocol 2025-03-26' } } : {}),
    responses: mcpResponses(method),
  })),
];

export const ROUTE_DOCS: readonly RouteDoc[] = [...HEALTH, ...WEB, ...PLUGINS, ...GATE, ...AUDIT, ...JOBS, ...SESSIONS, ...MCP];
