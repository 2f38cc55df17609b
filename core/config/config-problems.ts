import type { Grant } from '../gate/grant.js';
import type { Logger } from '../log.js';
import type { ManifestRecord } from '../manifest/load-manifests.js';
import { escapePointer } from '../schema/ajv.js';
import { closestName } from './closest-name.js';
import type { KernelConfig } from './kernel-config.js';

export type ConfigProblemCode = 'CONFIG_UNKNOWN_PLUGIN' | 'CONFIG_UNKNOWN_TOOL' | 'CONFIG_UNKNOWN_ACTION' | 'CONFIG_ENV_UNSET' | 'CONFIG_TOKEN_TOO_SHORT' | 'CONFIG_BACKEND_MISSING' | 'CONFIG_SNAPSHOTS_MISSING' | 'CONFIG_MODEL_UNAVAILABLE';

/**
 * A mistake that does not stop a start but leaves part of the configuration doing nothing (a deny rule
 * for a misspelt tool denies nothing): reported at start, with where it is and the name probably meant.
 */
export interface ConfigProblem {
  code: ConfigProblemCode;
  /** The file, relative to the workspace, that `pointer` points into. */
  file: 'quire.json' | 'agent/grants.json';
  pointer: string;
  message: string;
  didYouMean?: string;
}

export interface ConfigCheckInput {
  config: Pick<KernelConfig, 'auth' | 'plugins' | 'gate' | 'mcp'>;
  /** Every plugin found on disk, whatever its state. */
  records: readonly ManifestRecord[];
  grants: readonly Grant[];
  env: NodeJS.ProcessEnv;
  /**
   * The actions of the external servers connected now, by plugin id (`mcp-<server>`), with the tools'
   * own names: a rule naming one of them is judged like a plugin's. Servers not connected are not.
   */
  externalActions?: ReadonlyMap<string, ReadonlySet<string>>;
}

/** Plugin id → tool name → its action names; `undefined` when they are known only while connected (external servers). */
type KnownNames = Map<string, Map<string, ReadonlySet<string> | undefined>>;

interface NamedEntry {
  plugin?: string;
  tool: string;
  action?: string;
}

/** The shortest bearer token taken from the environment (the kernel's own are 35 characters). */
export const MIN_TOKEN_CHARS = 20;

export function findConfigProblems(input: ConfigCheckInput): ConfigProblem[] {
  const known = knownNames(input.records, Object.keys(input.config.mcp.servers), input.externalActions);
  // `plugins.<id>` configures plugins found on disk; an external server is configured under mcp.servers.
  const onDisk = new Set(input.records.map((record) => (record.ok ? record.compiled.manifest.id : record.id)));
  const problems: ConfigProblem[] = [];
  input.config.auth.tokens.forEach((token, index) => {
    // The authenticator skips such a token silently: nobody can use it until the variable is set.
    if (token.env === undefined) return;
    const value = input.env[token.env];
    if (value && value.length < MIN_TOKEN_CHARS) {
      problems.push(problem('CONFIG_TOKEN_TOO_SHORT', 'quire.json', `/auth/tokens/${index}/env`, `the environment variable ${token.env} of token '${token.name}' holds fewer than ${MIN_TOKEN_CHARS} characters, so the token matches nothing (a short bearer token can be guessed; make one with \`openssl rand -base64 32\`)`, undefined));
    }
    if (value) return;
    problems.push(problem('CONFIG_ENV_UNSET', 'quire.json', `/auth/tokens/${index}/env`, `the environment variable ${token.env} of token '${token.name}' is not set, so the token matches nothing`, closestName(token.env, Object.keys(input.env))));
  });
  for (const id of input.config.plugins.keys()) {
    if (onDisk.has(id)) continue;
    // An external MCP server listed as plugin `mcp-<name>` is configured under mcp.servers: its switch
    // and trust there (this entry changed nothing, and the warning said no such plugin existed).
    const server = id.startsWith('mcp-') ? id.slice('mcp-'.length) : undefined;
    if (server !== undefined && Object.hasOwn(input.config.mcp.servers, server)) {
      problems.push(problem('CONFIG_UNKNOWN_PLUGIN', 'quire.json', `/plugins/${escapePointer(id)}`, `'${id}' is the external MCP server '${server}': it is configured under mcp.servers.${server} (enabled, trusted there), not under plugins, so this entry changes nothing`, undefined));
      continue;
    }
    problems.push(problem('CONFIG_UNKNOWN_PLUGIN', 'quire.json', `/plugins/${escapePointer(id)}`, `no plugin has the id '${id}'`, closestName(id, onDisk)));
  }
  input.config.gate.deny.forEach((rule, index) => pushDefined(problems, checkNames(rule, known, 'quire.json', `/gate/deny/${index}`)));
  input.grants.forEach((grant, index) => pushDefined(problems, checkNames(grant, known, 'agent/grants.json', `/grants/${index}`)));
  return problems;
}

/** Each problem as a warning in the log: the start goes on. */
export function logConfigProblems(log: Logger, problems: readonly ConfigProblem[]): void {
  for (const { code, file, pointer, message, didYouMean } of problems) {
    log.warn(`configuration problem: ${file}#${pointer}: ${message}`, { code, file, pointer, ...(didYouMean !== undefined ? { didYouMean } : {}) });
  }
}

function knownNames(records: readonly ManifestRecord[], externalServers: readonly string[], connected: ReadonlyMap<string, ReadonlySet<string>> = new Map()): KnownNames {
  const known: KnownNames = new Map();
  for (const record of records) {
    const tools = new Map<string, ReadonlySet<string>>();
    if (record.ok) for (const tool of record.compiled.manifest.tools) tools.set(tool.name, new Set(Object.keys(tool.actions)));
    known.set(record.ok ? record.compiled.manifest.id : record.id, tools);
  }
  for (const name of externalServers) known.set(`mcp-${name}`, new Map([[name.replace(/-/g, '_'), connected.get(`mcp-${name}`)]]));
  return known;
}

/** The first name of a deny rule or grant that names nothing: its plugin, else its tool, else its action. */
function checkNames(entry: NamedEntry, known: KnownNames, file: ConfigProblem['file'], pointer: string): ConfigProblem | undefined {
  if (entry.plugin !== undefined && !known.has(entry.plugin)) {
    return problem('CONFIG_UNKNOWN_PLUGIN', file, `${pointer}/plugin`, `no plugin has the id '${entry.plugin}'`, closestName(entry.plugin, known.keys()));
  }
  const scope = entry.plugin !== undefined ? [known.get(entry.plugin)!] : [...known.values()];
  const where = entry.plugin !== undefined ? ` in plugin '${entry.plugin}'` : '';
  const tools = entry.tool === '*' ? scope.flatMap((plugin) => [...plugin.values()]) : scope.filter((plugin) => plugin.has(entry.tool)).map((plugin) => plugin.get(entry.tool));
  if (entry.tool !== '*' && tools.length === 0) {
    return problem('CONFIG_UNKNOWN_TOOL', file, `${pointer}/tool`, `no tool is named '${entry.tool}'${where}`, closestName(entry.tool, scope.flatMap((plugin) => [...plugin.keys()])));
  }
  // An external server's actions are known only while it is connected: not judged here.
  if (entry.action === undefined || tools.some((actions) => actions === undefined)) return undefined;
  const actions = tools.flatMap((set) => [...set!]);
  if (actions.includes(entry.action)) return undefined;
  return problem('CONFIG_UNKNOWN_ACTION', file, `${pointer}/action`, `no action '${entry.action}' in ${entry.tool === '*' ? 'any tool' : `the tool '${entry.tool}'`}${where}`, closestName(entry.action, actions));
}

/**
 * A backend selection (`plugins.search-semantic.config.embedder`) that names no active backend: the
 * actions using it answer 503 and nothing was said at start ('providrs', a plugin disabled).
 */
export function backendProblem(field: string, message: string): ConfigProblem {
  return problem('CONFIG_BACKEND_MISSING', 'quire.json', `/${field.split('.').join('/')}`, message, undefined);
}

/** The configured model cannot be used (its key's variable unset): every turn would answer 503. */
export function modelUnavailable(message: string, field: string | undefined): ConfigProblem {
  return problem('CONFIG_MODEL_UNAVAILABLE', 'quire.json', field ? `/${field.replace(/^\//, '')}` : '/plugins/providers/config/model', `${message}; every turn will fail until it is fixed`, undefined);
}

/** No snapshot service (the snapshots plugin disabled) while the agent may write only after one. */
export function snapshotsMissing(): ConfigProblem {
  return problem('CONFIG_SNAPSHOTS_MISSING', 'quire.json', '/agent/requireSnapshot', 'agent.requireSnapshot (true unless set) needs a snapshot before the agent\'s first write of a turn, and no active plugin takes snapshots (is the snapshots plugin disabled?): every agent write will be refused. Enable snapshots, or set agent.requireSnapshot to false', undefined);
}

function problem(code: ConfigProblemCode, file: ConfigProblem['file'], pointer: string, message: string, didYouMean: string | undefined): ConfigProblem {
  return { code, file, pointer, message: didYouMean === undefined ? message : `${message}; did you mean '${didYouMean}'?`, ...(didYouMean !== undefined ? { didYouMean } : {}) };
}

function pushDefined(problems: ConfigProblem[], found: ConfigProblem | undefined): void {
  if (found) problems.push(found);
}
