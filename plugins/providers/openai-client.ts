import OpenAI from 'openai';
import { DEFAULT_BASE_URL } from './config.js';
import { statusOf } from './model-check.js';

/** Ten minutes for a response to start, as the SDK's own default; the body's silences are the idle watchdog's. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 600_000;

/**
 * An OpenAI client for the configured server. Its own retries are off: the turn loop decides retries
 * (retry-after honoured, never after a tool call was emitted). The base URL is always passed, so an
 * environment variable cannot redirect requests behind the config's back.
 */
export function openAIClient(config: { baseURL?: string; requestTimeoutMs?: number }, key: string): OpenAI {
  return new OpenAI({ apiKey: key, baseURL: config.baseURL ?? DEFAULT_BASE_URL.openai, maxRetries: 0, timeout: config.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS });
}

/**
 * Whether the server lists the model. Servers that do not implement the list (404) cannot tell.
 * Bounded: at most 5,000 entries are read.
 */
export function openAIModelLookup(client: OpenAI, model: string): (signal: AbortSignal) => Promise<boolean | undefined> {
  return async (signal) => {
    try {
      let seen = 0;
      for await (const entry of client.models.list({ signal })) {
        // Local servers list tagged names (`llama3:latest` for `llama3`).
        if (entry.id === model || entry.id.startsWith(`${model}:`)) return true;
        if (++seen >= 5_000) return undefined;
      }
      return false;
    } catch (error) {
      if (statusOf(error) === 404 || statusOf(error) === 405) return undefined;
      throw error;
    }
  };
}
