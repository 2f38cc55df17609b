import OpenAI from 'openai';
import type { FunctionTool, ResponseInputItem, ResponseOutputItem, ResponseStreamEvent, ResponseUsage } from 'openai/resources/responses/responses';
import { ModelError, type ModelEvent, type ModelMessage, type ModelRequest } from '../../core/turn/model-provider.js';
import type { ModelConfig } from './config.js';
import { ConfiguredProvider } from './configured-provider.js';
import { hasText, nativeOf, splitLeadingSystem, type NativeOrigin } from './conversation.js';
import { toModelError } from './errors.js';
import { openAIClient, openAIModelLookup } from './openai-client.js';

const PROTOCOL = 'openai-responses';

/** What an assistant entry keeps: the response's output items, encrypted reasoning included, replayed verbatim. */
interface ResponsesNative extends NativeOrigin {
  output: ResponseOutputItem[];
}

/**
 * OpenAI Responses (PROTOCOLS.md §3.2), stateless: `store: false`, with the encrypted reasoning asked
 * for and sent back with the function calls it led to, so that reasoning carries across tool rounds.
 */
export class OpenAIResponsesProvider extends ConfiguredProvider {
  private readonly client: OpenAI;
  /**
   * Whether the encrypted reasoning is asked for: a model that does not reason (gpt-4.1, gpt-4o) refuses
   * the request that asks (400, param `include`), every one of them; then asked again without, and never after.
   */
  private encryptedReasoning = true;

  constructor(config: ModelConfig, key: { key: string; source: string }) {
    super(PROTOCOL, config);
    this.client = openAIClient(config, key.key);
    this.connectedTo(this.client.baseURL, key, openAIModelLookup(this.client, config.model));
  }

  async *stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelEvent> {
    const { system, rest } = splitLeadingSystem(request.messages);
    let stream: AsyncIterable<ResponseStreamEvent> | undefined;
    let retriedWithout = false;
    while (!stream) {
      const asked = this.encryptedReasoning && !retriedWithout;
      try {
        stream = await this.create(request, system, rest, asked, signal);
      } catch (error) {
        if (signal.aborted) return;
        if (asked && refusesInclude(error)) {
          retriedWithout = true;
          continue;
        }
        throw this.failure(error);
      }
    }
    // Kept only once a request without it was taken: a refusal that was about something else stays one request's.
    if (retriedWithout) this.encryptedReasoning = false;
    yield* this.events(stream, signal);
  }

  private create(request: ModelRequest, system: string[], rest: ModelMessage[], encryptedReasoning: boolean, signal: AbortSignal): Promise<AsyncIterable<ResponseStreamEvent>> {
    const { config } = this;
    const maxTokens = request.maxOutputTokens ?? config.maxOutputTokens;
    const temperature = request.temperature ?? config.temperature;
    return this.client.responses.create({
        model: config.model,
        // The rules are the instructions; what follows them (the summary) is a system message of its own.
        ...(system.length > 0 ? { instructions: system[0] } : {}),
        input: [...system.slice(1).map((content): ResponseInputItem => ({ role: 'system', content })), ...toInput(rest, this.origin)],
        ...(request.tools.length > 0 ? { tools: request.tools.map(toFunctionTool) } : {}),
        stream: true,
        store: false,
        ...(encryptedReasoning ? { include: ['reasoning.encrypted_content' as const] } : {}),
        ...(config.reasoningEffort ? { reasoning: { effort: config.reasoningEffort, summary: 'auto' as const } } : {}),
        ...(maxTokens !== undefined ? { max_output_tokens: maxTokens } : {}),
        ...(temperature !== undefined ? { temperature } : {}),
      }, { signal });
  }

  private async *events(stream: AsyncIterable<ResponseStreamEvent>, signal: AbortSignal): AsyncIterable<ModelEvent> {
    const calls = new Set<number>();
    // The arguments each call streamed, to set against the whole the call's last event carries.
    const streamed = new Map<number, string>();
    try {
      for await (const event of stream) {
        switch (event.type) {
          case 'response.output_text.delta':
            if (event.delta !== '') yield { type: 'text', delta: event.delta };
            break;
          case 'response.reasoning_summary_text.delta':
          case 'response.reasoning_text.delta':
            if (event.delta !== '') yield { type: 'reasoning', delta: event.delta };
            break;
          case 'response.output_item.added':
            if (event.item.type === 'function_call') {
              calls.add(event.output_index);
              yield { type: 'tool_call_start', index: event.output_index, id: event.item.call_id, name: event.item.name };
              streamed.set(event.output_index, event.item.arguments ?? '');
              if (event.item.arguments) yield { type: 'tool_call_delta', index: event.output_index, argumentsDelta: event.item.arguments };
            }
            break;
          case 'response.function_call_arguments.delta':
            if (calls.has(event.output_index)) {
              streamed.set(event.output_index, (streamed.get(event.output_index) ?? '') + event.delta);
              yield { type: 'tool_call_delta', index: event.output_index, argumentsDelta: event.delta };
            }
            break;
          case 'response.output_item.done':
            if (event.item.type === 'function_call' && calls.has(event.output_index)) {
              // A compatible server may send the arguments whole here only: what ran ({}) and what the
              // history replays (the output) then differed. The rest is taken from the whole; a whole that
              // does not continue what streamed cannot be told apart: the round fails.
              const so = streamed.get(event.output_index) ?? '';
              const whole = event.item.arguments ?? '';
              if (whole !== '' && whole !== so && !sameJson(whole, so)) {
                if (!whole.startsWith(so)) throw new ModelError('server', `the arguments of call ${event.item.call_id} streamed differ from those the server sent whole`);
                yield { type: 'tool_call_delta', index: event.output_index, argumentsDelta: whole.slice(so.length) };
              }
              yield { type: 'tool_call_end', index: event.output_index };
            }
            break;
          case 'response.completed':
          case 'response.incomplete': {
            const { response } = event;
            if (response.usage) yield usageEvent(response.usage);
            // Kept only with reasoning items to send back (see anthropic.ts: a turn holding native state is never compacted inside).
            const native: ResponsesNative | undefined = response.output.some((item) => item.type === 'reasoning') ? { ...this.origin, output: response.output } : undefined;
            const reason = event.type === 'response.incomplete'
              ? (response.incomplete_details?.reason === 'content_filter' ? 'content_filter' : 'length')
              : response.output.some((item) => item.type === 'function_call') ? 'tool_calls' : 'stop';
            yield { type: 'finish', reason, ...(native ? { providerData: native } : {}) };
            return;
          }
          case 'response.failed':
            throw new ModelError(categoryOfCode(event.response.error?.code), event.response.error?.message ?? 'the response failed');
          case 'error':
            throw new ModelError(categoryOfCode(event.code ?? undefined), event.message);
          default:
            // In-progress, reasoning and item bookkeeping: the server is working, which the idle watchdog must see.
            yield { type: 'keepalive' };
            break;
        }
      }
    } catch (error) {
      if (signal.aborted) return;
      throw this.failure(error);
    }
    if (signal.aborted) return;
    // The stream ended without response.completed: what arrived is not a whole answer.
    throw new ModelError('server', 'the response stream ended before response.completed');
  }
}

function categoryOfCode(code: string | undefined): ModelError['category'] {
  if (code === 'context_length_exceeded') return 'context_overflow';
  if (code === 'rate_limit_exceeded') return 'rate_limit';
  if (code === 'invalid_prompt' || code === 'invalid_request_error') return 'invalid_request';
  return 'server';
}

function usageEvent(usage: ResponseUsage): ModelEvent {
  return { type: 'usage', promptTokens: usage.input_tokens, completionTokens: usage.output_tokens, cachedTokens: usage.input_tokens_details?.cached_tokens ?? 0, reasoningTokens: usage.output_tokens_details?.reasoning_tokens ?? 0 };
}

function toFunctionTool(tool: ModelRequest['tools'][number]): FunctionTool {
  return { type: 'function', name: tool.name, description: tool.description, parameters: { ...tool.inputSchema }, strict: false };
}

function toInput(messages: readonly ModelMessage[], origin: NativeOrigin): ResponseInputItem[] {
  const input: ResponseInputItem[] = [];
  for (const message of messages) {
    if (message.role === 'system') input.push({ role: 'system', content: message.content });
    else if (message.role === 'user') input.push({ role: 'user', content: message.content });
    else if (message.role === 'tool') input.push({ type: 'function_call_output', call_id: message.toolCallId ?? '', output: message.content });
    else {
      const native = nativeOf<ResponsesNative>(message.providerData, origin);
      if (native) {
        // Verbatim: the encrypted reasoning is only accepted with the items it was returned with.
        input.push(...(native.output as ResponseInputItem[]));
        continue;
      }
      if (hasText(message.content)) input.push({ role: 'assistant', content: message.content });
      for (const call of message.toolCalls ?? []) input.push({ type: 'function_call', call_id: call.id, name: call.name, arguments: call.arguments });
    }
  }
  return input;
}

/** A 400 refusing the `include` of encrypted reasoning ("Encrypted content is not supported with this model"). */
function refusesInclude(error: unknown): boolean {
  if (!(error instanceof OpenAI.APIError) || error.status !== 400) return false;
  // Not `invalid_encrypted_content` ("The encrypted content … could not be verified"): reasoning sent back
  // that another key or organisation made; leaving `include` out would break every later round.
  if (error.code === 'invalid_encrypted_content') return false;
  return error.param === 'include' || /not supported with this model/i.test(error.message);
}

/** Whether two texts are the same JSON value, however spaced (a whole sent again, formatted otherwise). */
function sameJson(a: string, b: string): boolean {
  try {
    return JSON.stringify(JSON.parse(a)) === JSON.stringify(JSON.parse(b));
  } catch {
    return false;
  }
}
