import Anthropic from '@anthropic-ai/sdk';
import { ApiError } from '@google/genai';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { ModelError } from '../../../core/turn/model-provider.js';
import { DEFAULT_RETRY, retryDelay } from '../../../core/turn/retry-policy.js';
import { toModelError } from '../../../plugins/providers/errors.js';

const headers = (entries: Record<string, string>) => new Headers(entries);

describe('mapping SDK errors once', () => {
  it('puts each SDK error in the category the turn loop acts on', () => {
    const cases: [unknown, string][] = [
      [new OpenAI.RateLimitError(429, {}, 'slow down', headers({})), 'rate_limit'],
      [new OpenAI.AuthenticationError(401, {}, 'bad key', headers({})), 'authentication'],
      [new OpenAI.BadRequestError(400, { code: 'context_length_exceeded' }, "This model's maximum context length is 8192 tokens", headers({})), 'context_overflow'],
      [new OpenAI.BadRequestError(400, {}, 'unknown parameter', headers({})), 'invalid_request'],
      [new OpenAI.InternalServerError(503, {}, 'unavailable', headers({})), 'server'],
      [new OpenAI.APIConnectionTimeoutError({ message: 'timed out' }), 'timeout'],
      [new OpenAI.APIConnectionError({ message: 'Connection error.' }), 'network'],
      [new OpenAI.APIError(undefined, { type: 'server_error' }, 'The server had an error', undefined), 'server'],
      [new Anthropic.APIError(529, {}, 'Overloaded', headers({})), 'server'],
      [new Anthropic.BadRequestError(400, { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 210000 tokens > 200000 maximum' } }, undefined, headers({})), 'context_overflow'],
      [new Anthropic.APIError(413, {}, 'request too large', headers({})), 'context_overflow'],
      [new ApiError({ status: 429, message: 'Resource has been exhausted' }), 'rate_limit'],
      [new ApiError({ status: 400, message: 'The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).' }), 'context_overflow'],
      [new ApiError({ status: 404, message: 'models/nope is not found' }), 'invalid_request'],
      [Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } }), 'network'],
      [new TypeError('x is not a function'), 'invalid_request'],
      // A per-minute limit that talks of quota and billing in prose is still a limit to wait out.
      [new ApiError({ status: 429, message: '{"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"7s"}]}}' }), 'rate_limit'],
      [new OpenAI.RateLimitError(429, { code: 'insufficient_quota', message: 'You exceeded your current quota' }, undefined, headers({})), 'invalid_request'],
    ];
    for (const [error, category] of cases) expect([String((error as Error).message), toModelError(error).category]).toEqual([String((error as Error).message), category]);
  });

  it('reads retry-after-ms, then retry-after in seconds or as a date, and the policy honours it up to its ceiling', () => {
    expect(toModelError(new OpenAI.RateLimitError(429, {}, 'x', headers({ 'retry-after-ms': '5', 'retry-after': '9' }))).retryAfterMs).toBe(5);
    expect(toModelError(new OpenAI.RateLimitError(429, {}, 'x', headers({ 'retry-after': '2' }))).retryAfterMs).toBe(2_000);
    const inTenSeconds = new Date(Date.now() + 10_000).toUTCString();
    expect(toModelError(new Anthropic.RateLimitError(429, {}, 'x', headers({ 'retry-after': inTenSeconds }))).retryAfterMs).toBeGreaterThan(8_000);
    expect(toModelError(new ApiError({ status: 429, message: '{"error":{"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"7s"}]}}' })).retryAfterMs).toBe(7_000);
    expect(retryDelay(new ModelError('rate_limit', 'x', 5), 1, DEFAULT_RETRY)).toBe(5);
    expect(retryDelay(new ModelError('rate_limit', 'x', 3_600_000), 1, DEFAULT_RETRY)).toBe(DEFAULT_RETRY.maxDelayMs);
  });
});

describe('asking a server whether it offers the model', () => {
  it('takes only the vendor\'s own not-found answer as "not offered"; a proxy without the route cannot tell', async () => {
    const { lookupById } = await import('../../../plugins/providers/model-check.js');
    const vendor = lookupById('claude-x', async () => { throw new Anthropic.NotFoundError(404, { type: 'error', error: { type: 'not_found_error', message: 'model: claude-x' } }, undefined, headers({})); });
    expect(await vendor(new AbortController().signal)).toBe(false);
    const proxy = lookupById('claude-x', async () => { throw new Anthropic.NotFoundError(404, undefined, 'Cannot GET /v1/models/claude-x', headers({})); });
    expect(await proxy(new AbortController().signal)).toBeUndefined();
    const refused = lookupById('claude-x', async () => { throw new Anthropic.AuthenticationError(401, {}, 'bad key', headers({})); });
    await expect(refused(new AbortController().signal)).rejects.toThrow();
  });

  it('says a server refused a request sent without a key (apiKeyEnv false) as that, naming the field to set', async () => {
    const { ModelCheck } = await import('../../../plugins/providers/model-check.js');
    const refuse = async (): Promise<boolean> => { throw new Anthropic.AuthenticationError(401, {}, 'bad key', headers({})); };
    const keyless = new ModelCheck({ provider: 'openai-chat', model: 'm', baseURL: 'http://127.0.0.1:9/v1', keySource: 'no key' }, refuse);
    await expect(keyless.ensure(new AbortController().signal)).rejects.toThrow('openai-chat at http://127.0.0.1:9/v1 refused the request, sent without a key (apiKeyEnv is false): if it needs one, name the variable that holds it in apiKeyEnv (HTTP 401)');
    const keyed = new ModelCheck({ provider: 'openai-chat', model: 'm', baseURL: 'http://127.0.0.1:9/v1', keySource: 'MY_KEY' }, refuse);
    await expect(keyed.ensure(new AbortController().signal)).rejects.toThrow('refused the key from MY_KEY (HTTP 401)');
  });
});
