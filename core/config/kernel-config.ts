import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { KernelError } from '../errors.js';
import { jsonProblem } from '../util/json-file.js';
import type { Role } from '../plugin-api.js';
import { escapePointer, formatIssues, runValidator, type SchemaIssue } from '../schema/ajv.js';
import { getKernelConfigValidator } from '../manifest/manifest-schema.js';
import type { ModelPrice } from '../usage/prices.js';

export interface TokenEntry {
  name: string;
  role: Role;
  sha256?: string;
  env?: string;
}

export interface PluginSettings {
  enabled?: boolean;
  trusted?: boolean;
  config?: Record<string, unknown>;
}

export interface DenyRule {
  plugin?: string;
  tool: string;
  action?: string;
  notebook?: string;
}

/** The agent's turn settings (`agent` in quire.json); defaults in core/turn/kernel-turns.ts. */
export interface AgentSettings {
  requireSnapshot?: boolean;
  maxToolRounds?: number;
  confirmTimeoutMs?: number;
  idleTimeoutMs?: number;
  contextLimit?: number;
  maxOutputTokens?: number;
  /** A result holding local-only notes, for a model off this machine: ask the person (default) or withhold. */
  localOnlyResults?: 'ask' | 'withhold';
}

/** quire.json as written by a person; every field optional. */
export interface KernelConfigFile {
  server?: { host?: string; port?: number; bodyLimitBytes?: number; allowedHosts?: string[]; allowedOrigins?: string[] } & ConnectionLimits;
  auth?: { tokens?: TokenEntry[] };
  plugins?: Record<string, PluginSettings>;
  gate?: { allowAutoMode?: boolean; deny?: DenyRule[] };
  pluginHost?: { activationTimeoutMs?: number };
  actions?: { timeoutMs?: number; stopGraceMs?: number; jobTimeoutMs?: number; keepJobs?: number };
  agent?: AgentSettings;
  mcp?: McpSettings;
  readOnly?: boolean;
  usage?: { prices?: Record<string, ModelPrice> };
  budgets?: Budgets;
}

/** A limit on model use: tokens (input plus output) and/or USD. */
export interface BudgetLimit {
  tokens?: number;
  usd?: number;
}

/** `budgets` in quire.json: per turn, per session, per calendar day and month (UTC). */
export interface Budgets {
  turn?: BudgetLimit;
  session?: BudgetLimit;
  day?: BudgetLimit;
  month?: BudgetLimit;
  /** `stop` (default): the turn ends with BUDGET_EXCEEDED; `ask`: the person may raise the limit for the rest of the turn. */
  whenExceeded?: 'stop' | 'ask';
}

/** How long a client may take to send a request, and how many connections are open at once (`server.*`). */
export interface ConnectionLimits {
  requestTimeoutMs?: number;
  headersTimeoutMs?: number;
  maxConnections?: number;
}

/** An external MCP server whose tools become a plugin (`mcp.servers.<name>` in quire.json). */
export type ExternalMcpServer =
  | { command: string; args?: string[]; env?: Record<string, string>; cwd?: string } & ExternalServerPolicy
  | { url: string; headers?: Record<string, string>; headersFromEnv?: Record<string, string>; oauth?: { clientId: string; clientSecretEnv: string; issuer: string; scope?: string } } & ExternalServerPolicy;

/** What the kernel lets an external server's tools do, whatever its transport. */
export interface ExternalServerPolicy {
  trusted?: boolean;
  enabled?: boolean;
  timeoutMs?: number;
  costs?: boolean;
  /** Offer its tools on the kernel's own `/mcp` too (trusted servers only); by default they are not. */
  serveOverMcp?: boolean;
}

/** `/mcp` (the kernel as a server) and the external servers it uses. */
export interface McpSettings {
  sessionIdleMs?: number;
  maxSessions?: number;
  /** Send MCP clients what local-only notebooks hold (their model may be off this machine); default false: a marker instead. */
  sendLocalOnly?: boolean;
  servers?: Record<string, ExternalMcpServer>;
}

/** The configuration the kernel runs with: the file plus defaults. */
export interface KernelConfig {
  server: { host: string; port: number; bodyLimitBytes: number; allowedHosts: string[]; allowedOrigins: string[] } & Required<ConnectionLimits>;
  auth: { tokens: TokenEntry[] };
  plugins: Map<string, PluginSettings>;
  gate: { allowAutoMode: boolean; deny: DenyRule[] };
  pluginHost: { activationTimeoutMs: number };
  /** Calls: the short limit, how long a stopped call is waited for, the limit of long work (jobs), job records kept. */
  actions: { timeoutMs: number; stopGraceMs: number; jobTimeoutMs: number; keepJobs: number };
  agent: AgentSettings;
  mcp: { sessionIdleMs: number; maxSessions: number; sendLocalOnly: boolean; servers: Record<string, ExternalMcpServer> };
  readOnly: boolean;
  usage: { prices: Record<string, ModelPrice> };
  budgets: Budgets;
}

export const DEFAULT_PORT = 6806;

export function withDefaults(file: KernelConfigFile): KernelConfig {
  return {
    server: {
      host: file.server?.host ?? '127.0.0.1',
      port: file.server?.port ?? DEFAULT_PORT,
      bodyLimitBytes: file.server?.bodyLimitBytes ?? 1024 * 1024,
      allowedHosts: file.server?.allowedHosts ?? [],
      allowedOrigins: file.server?.allowedOrigins ?? [],
      requestTimeoutMs: file.server?.requestTimeoutMs ?? 30_000,
      headersTimeoutMs: file.server?.headersTimeoutMs ?? 10_000,
      maxConnections: file.server?.maxConnections ?? 512,
    },
    auth: { tokens: file.auth?.tokens ?? [] },
    plugins: new Map(Object.entries(file.plugins ?? {})),
    gate: { allowAutoMode: file.gate?.allowAutoMode ?? true, deny: file.gate?.deny ?? [] },
    pluginHost: { activationTimeoutMs: file.pluginHost?.activationTimeoutMs ?? 10_000 },
    actions: {
      timeoutMs: file.actions?.timeoutMs ?? 60_000, stopGraceMs: file.actions?.stopGraceMs ?? 10_000,
      jobTimeoutMs: file.actions?.jobTimeoutMs ?? 6 * 3_600_000, keepJobs: file.actions?.keepJobs ?? 200,
    },
    agent: { ...file.agent },
    mcp: { sessionIdleMs: file.mcp?.sessionIdleMs ?? 30 * 60_000, maxSessions: file.mcp?.maxSessions ?? 64, sendLocalOnly: file.mcp?.sendLocalOnly ?? false, servers: file.mcp?.servers ?? {} },
    readOnly: file.readOnly ?? false,
    usage: { prices: file.usage?.prices ?? {} },
    budgets: file.budgets ?? {},
  };
}

/** Validates a parsed quire.json; errors name the file and the JSON pointer of each problem. */
export function parseKernelConfig(raw: unknown, file: string): KernelConfigFile {
  const result = runValidator<KernelConfigFile>(getKernelConfigValidator(), raw);
  const issues = result.ok ? ruleIssues(result.value) : result.issues;
  if (!result.ok || issues.length > 0) {
    throw new KernelError('CONFIG_INVALID', `${file}: ${formatIssues(issues)}`, { details: { file, issues } });
  }
  return result.value;
}

/** What the schema cannot say clearly (a condition inside its `oneOf` would bury the message). */
function ruleIssues(config: KernelConfigFile): SchemaIssue[] {
  const issues: SchemaIssue[] = [];
  for (const [name, server] of Object.entries(config.mcp?.servers ?? {})) {
    // Serving a server's tools on /mcp lets any MCP client drive it without confirmation: only trusted ones.
    if (server.serveOverMcp === true && server.trusted !== true) {
      issues.push({ pointer: `/mcp/servers/${escapePointer(name)}/serveOverMcp`, keyword: 'trusted', message: `serveOverMcp is allowed only for a server marked "trusted": true (mcp.servers.${name})` });
    }
  }
  return issues;
}

/** Reads `<workspace>/quire.json`; a missing file means all defaults. */
export async function readKernelConfigFile(file: string): Promise<KernelConfigFile> {
  if (!existsSync(file)) return {};
  let raw: unknown;
  let text: string | undefined;
  try {
    text = await readFile(file, 'utf8');
    raw = JSON.parse(text);
  } catch (error) {
    throw new KernelError('CONFIG_INVALID', `${file}: not valid JSON: ${jsonProblem(error, text)}`, { details: { file } });
  }
  return parseKernelConfig(raw, file);
}

export function isPluginEnabled(config: KernelConfig, pluginId: string): boolean {
  return config.plugins.get(pluginId)?.enabled !== false;
}
