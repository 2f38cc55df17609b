import { KernelError } from '../../core/index.js';

export type Protocol = 'openai-chat' | 'openai-responses' | 'anthropic' | 'gemini';
export type ReasoningEffort = 'minimal' | 'low' | 'medium' | 'high';

/** `plugins.providers.config.model` in quire.json. */
export interface ModelConfig {
  provider: Protocol;
  model: string;
  /** The API's address; an OpenAI-compatible local server goes here. Defaults to the vendor's. */
  baseURL?: string;
  /** The environment variable holding the key (never the key itself); `false` for servers that take none. */
  apiKeyEnv?: string | false;
  maxOutputTokens?: number;
  temperature?: number;
  reasoningEffort?: ReasoningEffort;
  contextLimit?: number;
  /** How long to wait for a response to start (headers); a stalled body is the turn loop's idle watchdog's. */
  requestTimeoutMs?: number;
  /** The server runs on this machine (a loopback baseURL, checked): the manifest's `local` entry, no effects. */
  local?: boolean;
}

/**
 * Refuses a baseURL holding a user name or password: fetch refuses such an address (every request failed
 * with "Request cannot be constructed from a URL that includes credentials"), and a password does not
 * belong in quire.json. The address is not repeated (it holds the password). Unavailable, as a missing
 * key is (a turn is `503`, not the kernel's fault).
 */
export function checkBaseURL(baseURL: string | undefined, field: string): void {
  if (baseURL === undefined) return;
  let url: URL;
  try {
    url = new URL(baseURL);
  } catch {
    throw new KernelError('MODEL_UNAVAILABLE', `${field}/baseURL is not a URL`, { details: { field: `${field}/baseURL` } });
  }
  if (url.username !== '' || url.password !== '') {
    throw new KernelError('MODEL_UNAVAILABLE', `${field}/baseURL holds a user name or password (before '@'): requests cannot be sent to such an address, and a password does not belong in quire.json; give the address without it, and the key by apiKeyEnv`, { details: { field: `${field}/baseURL` } });
  }
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/** Refuses `local: true` unless the baseURL names this machine: the claim decides what notes it is sent (a turn is `503`; it was `500`). */
export function checkLocal(config: ModelConfig, field: string): void {
  if (config.local !== true) return;
  let host: string | undefined;
  try {
    host = config.baseURL !== undefined ? new URL(config.baseURL).hostname : undefined;
  } catch {
    host = undefined;
  }
  if (host === undefined || !(LOOPBACK_HOSTS.has(host) || /^127\.\d+\.\d+\.\d+$/.test(host))) {
    throw new KernelError('MODEL_UNAVAILABLE', `${field}/local is true, but baseURL ${config.baseURL === undefined ? 'is not set' : `(${config.baseURL}) does not name this machine`}: a local model server must be reached on a loopback address (127.0.0.1, localhost, [::1])`, { details: { field: `${field}/local` } });
  }
}

/** `plugins.providers.config.embedder`: an OpenAI-compatible embeddings endpoint, or Gemini's. */
export interface EmbedderConfig {
  provider: 'openai' | 'gemini';
  model: string;
  baseURL?: string;
  apiKeyEnv?: string | false;
  /** OpenAI's `dimensions`, Gemini's `outputDimensionality`: every vector must then have this length. */
  dimensions?: number;
  batchSize?: number;
  requestTimeoutMs?: number;
}

export interface ProvidersConfig {
  model?: ModelConfig;
  embedder?: EmbedderConfig;
  reranker?: RerankerConfig;
}

/** The `/rerank` request and answer shapes servers speak (see rerank-shapes.ts for where they differ). */
export type RerankShape = 'cohere' | 'jina' | 'voyage' | 'tei';

/** `plugins.providers.config.reranker`: an HTTP `/rerank` endpoint. */
export interface RerankerConfig {
  shape: RerankShape;
  /** The server's root (the shape adds its path); required for TEI, the vendor's otherwise. */
  baseURL?: string;
  /** Required by Cohere and Voyage; Jina has a default; TEI serves one model. */
  model?: string;
  apiKeyEnv?: string | false;
  requestTimeoutMs?: number;
  /** Each document is cut to this many characters before it is sent. */
  maxCharacters?: number;
}

export const DEFAULT_BASE_URL: Readonly<Record<Protocol | 'openai', string>> = {
  'openai-chat': 'https://api.openai.com/v1',
  'openai-responses': 'https://api.openai.com/v1',
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com',
  gemini: 'https://generativelanguage.googleapis.com',
};

const DEFAULT_KEY_ENV: Readonly<Record<Protocol | 'openai', string>> = {
  'openai-chat': 'OPENAI_API_KEY',
  'openai-responses': 'OPENAI_API_KEY',
  openai: 'OPENAI_API_KEY',
  anthropic: 'ANTHROPIC_API_KEY',
  gemini: 'GEMINI_API_KEY',
};

/** A server that takes no key still gets one from the SDKs' point of view; this one is never a secret. */
const NO_KEY = 'no-key';
/** Where the key came from when none is sent (`apiKeyEnv: false`): a refusal then says so, not "the key from". */
export const NO_KEY_SOURCE = 'no key';

export interface ResolvedKey {
  key: string;
  /** What to name in messages: the variable, never its value. */
  source: string;
}

/**
 * Whether an `apiKeyEnv` looks like a key pasted in place of a variable's name: not a name at all, or a
 * name-shaped key (a Gemini key, `AIza…`, any key without a hyphen). It is then never repeated (the
 * "key is missing" message named it in the log, in every turn's 503 and in the chat).
 */
export function looksLikeKey(variable: string, env: NodeJS.ProcessEnv = process.env): boolean {
  // Not a name at all (OpenAI's `sk-proj-…`, Anthropic's `sk-ant-…`): the schema refused it by its pattern,
  // and a native plugin's config refused stopped every command, `quire notebooks` too; it is refused
  // here, the notes readable and turns answered 503, as any key pasted in place of a name is.
  if (!VARIABLE_NAME.test(variable)) return true;
  // A variable that is set is a name, whatever it looks like (a long mixed-case name was refused).
  if (env[variable] !== undefined) return false;
  return KEY_PREFIXES.test(variable) || /^[0-9a-f]{32,}$/i.test(variable) || variable.length > 64
    || (variable.length >= 24 && /[a-z]/.test(variable) && /[A-Z]/.test(variable) && /\d/.test(variable));
}

const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,199}$/;

/** Common keys that the name pattern lets through (no hyphen), by their start and a long tail: Gemini, Hugging Face, Groq, Replicate, Stripe-like, GitHub, GitLab (a short `hf_token` is a name). */
const KEY_PREFIXES = /^(?:AIza|hf_|gsk_|r8_|sk_|rk_|ghp_|gho_|github_pat_|glpat)[A-Za-z0-9_]{16,}$/;

/** The refusal of such an `apiKeyEnv`, which does not show it. */
export function keyInVariableName(field: string): KernelError {
  return new KernelError('MODEL_UNAVAILABLE', `${field}/apiKeyEnv looks like a key, not the name of an environment variable (letters, digits and _): put the key in a variable (export MY_KEY=…) and name the variable there (the value is not shown)`, { details: { field: `${field}/apiKeyEnv` } });
}

/**
 * Reads the key from the environment variable the config names. A missing one is a clear error before
 * any request, naming the variable and the config field.
 */
export function resolveKey(config: { provider: Protocol | 'openai'; apiKeyEnv?: string | false }, field: string, env: NodeJS.ProcessEnv = process.env): ResolvedKey {
  if (config.apiKeyEnv === false) return { key: NO_KEY, source: NO_KEY_SOURCE };
  const variable = config.apiKeyEnv ?? DEFAULT_KEY_ENV[config.provider];
  if (looksLikeKey(variable, env)) throw keyInVariableName(field);
  const key = env[variable];
  if (key === undefined || key.trim() === '') {
    throw new KernelError('MODEL_UNAVAILABLE', `the ${config.provider} key is missing: set the environment variable ${variable} (named by ${field}/apiKeyEnv), or set apiKeyEnv to false for a server that takes no key`, { details: { field: `${field}/apiKeyEnv`, variable } });
  }
  return { key: key.trim(), source: variable };
}

/** The window and answer size the config gives, for the turn loop's compaction. */
export function limitsOf(config: ModelConfig): { contextLimit?: number; maxOutputTokens?: number } {
  return { ...(config.contextLimit ? { contextLimit: config.contextLimit } : {}), ...(config.maxOutputTokens ? { maxOutputTokens: config.maxOutputTokens } : {}) };
}
