import type { JsonSchema } from './openapi-types.js';

/**
 * The shapes the routes answer with, as JSON Schema 2020-12 (OpenAPI 3.1's dialect). They name the
 * fields a client may rely on; records may carry more (a session keeps whatever a client stored), so
 * objects stay open unless the kernel itself refuses other fields.
 */
const str: JsonSchema = { type: 'string' };
const int: JsonSchema = { type: 'integer' };
const bool: JsonSchema = { type: 'boolean' };
const time: JsonSchema = { type: 'string', format: 'date-time' };
const effects: JsonSchema = { type: 'array', items: { $ref: '#/components/schemas/Effect' } };
const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });

export const COMPONENT_SCHEMAS: Record<string, JsonSchema> = {
  Effect: { type: 'string', enum: ['localWrite', 'dataEgress', 'externalCost'] },
  ErrorBody: {
    type: 'object',
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['code', 'message', 'details'],
        properties: { code: str, message: str, details: { type: 'object' } },
      },
    },
  },
  ProgressUpdate: { type: 'object', properties: { done: { type: 'number' }, total: { type: 'number' }, message: str, ifInterrupted: str } },
  Job: {
    type: 'object',
    required: ['id', 'action', 'plugin', 'tool', 'name', 'startedBy', 'state', 'created', 'updated', 'progress'],
    properties: {
      id: str, action: str, plugin: str, tool: str, name: str, startedBy: str, sessionId: str, turnId: str,
      state: { type: 'string', enum: ['running', 'succeeded', 'failed', 'cancelled', 'timed_out', 'interrupted'] },
      created: time, updated: time, ended: time, progress: ref('ProgressUpdate'), stopped: str, result: {},
      error: { type: 'object', required: ['code', 'message'], properties: { code: str, message: str, details: { type: 'object' } } },
    },
  },
  Confirmation: {
    type: 'object',
    required: ['id', 'plugin', 'tool', 'action', 'wireName', 'argsHash', 'effects', 'destructive', 'principal', 'createdAt', 'status'],
    properties: {
      id: str, kind: { type: 'string', enum: ['release', 'budget'] }, note: str, plugin: str, tool: str, action: str, wireName: str,
      arguments: {}, argsHash: str, effects, destructive: bool, principal: str, sessionId: str, turnId: str, notebook: str,
      createdAt: time, status: { type: 'string', enum: ['pending', 'approved', 'rejected', 'consumed', 'expired'] },
      answeredAt: time, answeredBy: str,
    },
  },
  Grant: {
    type: 'object',
    required: ['id', 'plugin', 'tool', 'action', 'effects', 'createdAt', 'createdBy'],
    properties: { id: str, plugin: str, tool: str, action: str, effects, notebook: str, expiresAt: time, createdAt: time, createdBy: str, fromConfirmation: str },
  },
  SessionEntry: {
    type: 'object',
    required: ['id', 'type'],
    properties: {
      id: str,
      type: { type: 'string', enum: ['user', 'thinking', 'assistant', 'confirm', 'question', 'snapshot', 'rollback'] },
      content: str, timestamp: str,
      // ok: false for a call refused, failed or stopped (its state alone said 'finished').
      toolCalls: { type: 'array', items: { type: 'object', required: ['id', 'name'], properties: { id: str, name: str, arguments: {}, result: str, state: str, ok: bool } } },
      // A rollback entry: the turn it undid, and what it left (none: undone whole).
      turnID: str, conflicts: { type: 'array', items: { type: 'object' } },
    },
  },
  Session: {
    type: 'object',
    required: ['id', 'entries', 'revision'],
    properties: {
      id: str, title: str, entries: { type: 'array', items: ref('SessionEntry') }, revision: int, lastCommittedTurnID: str,
      createdAt: str, updatedAt: str, promptTokens: int, completionTokens: int,
      permissionMode: { type: 'string', enum: ['confirm', 'auto'] },
      // A turn not yet committed: 'running' while one runs (the web app offers Stop after a reload).
      recoveryTurnID: str, recoveryState: str,
      // The index of the entry that turn answers: the entries before it are the stored history's.
      recoveryFrom: int,
    },
  },
  SessionSummary: { type: 'object', required: ['id', 'title', 'createdAt', 'updatedAt'], properties: { id: str, title: str, createdAt: str, updatedAt: str } },
  SavedSession: { type: 'object', required: ['revision', 'session'], properties: { revision: int, session: ref('Session') } },
  Question: { type: 'object', required: ['id', 'sessionId'], properties: { id: str, sessionId: str, turnID: str, questions: { type: 'array' } } },
  Action: {
    type: 'object',
    required: ['name', 'wireName', 'effects', 'declaredEffects', 'destructive', 'idempotent', 'agentOnly', 'personOnly', 'input'],
    properties: {
      name: str, wireName: str, description: str, effects, declaredEffects: effects, destructive: bool, idempotent: bool,
      agentOnly: bool, personOnly: bool, adminOnly: bool, input: { type: 'object' }, unavailable: str,
    },
  },
  Plugin: {
    type: 'object',
    required: ['id', 'source', 'enabled', 'active', 'trusted', 'state'],
    properties: {
      id: str, source: str, enabled: bool, active: bool, trusted: bool, file: str, version: str, description: str,
      state: { type: 'string', enum: ['active', 'inactive', 'disabled', 'refused', 'invalid', 'connected', 'connecting', 'failed'] },
      requires: { type: 'array' }, provides: { type: 'array' }, problems: { type: 'array' }, issues: { type: 'array' },
      tools: { type: 'array', items: { type: 'object', required: ['name', 'actions'], properties: { name: str, title: str, description: str, actions: { type: 'array', items: ref('Action') } } } },
    },
  },
  Backend: { type: 'object', required: ['kind', 'name'], properties: { kind: str, name: str, plugin: str, effects, selected: bool } },
  NotebookPrivacy: {
    type: 'object',
    required: ['id', 'name', 'agent', 'egress'],
    properties: { id: str, name: str, agent: { type: 'string', enum: ['write', 'read', 'none'] }, egress: { type: 'string', enum: ['allowed', 'local-only'] } },
  },
  UsageRow: {
    type: 'object',
    required: ['key', 'requests', 'input', 'cachedInput', 'output', 'reasoning', 'cost', 'unpricedTokens'],
    properties: {
      key: str, requests: int, input: int, cachedInput: int, output: int, reasoning: int, unpricedTokens: int,
      cost: { type: ['number', 'null'], description: 'USD; null where a price is unknown' },
    },
  },
  AuditRecord: {
    type: 'object',
    required: ['seq', 'time', 'prev', 'hash', 'principal', 'plugin', 'tool', 'action', 'effects', 'argsHash', 'outcome'],
    properties: {
      seq: int, time, prev: str, hash: str, plugin: str, tool: str, action: str, effects, argsHash: str,
      outcome: { type: 'string', enum: ['ok', 'error', 'refused', 'egress_denied'] }, errorCode: str, details: { type: 'object' },
      principal: { type: 'object', required: ['kind', 'name'], properties: { kind: str, name: str, role: str, sessionId: str, turnId: str, client: str } },
    },
  },
  McpServer: { type: 'object', required: ['name', 'state'], properties: { name: str, id: str, state: str, endpoint: {}, tools: { type: 'array' }, pending: { type: 'array' }, error: {} } },
};

/** The turn events sent on `POST /api/agent/sessions/{id}/turns` (one SSE event each, `data` is the JSON). */
export const TURN_EVENT_TYPES = [
  'turn', 'thinking', 'reasoning', 'content', 'tool_call', 'tool_result', 'job', 'progress', 'confirm', 'question', 'snapshot',
  'retry', 'usage', 'withheld', 'error', 'done',
] as const;
