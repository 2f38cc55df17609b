import Anthropic from '@anthropic-ai/sdk';
import type { ContentBlockParam, MessageParam, RawMessageStreamEvent, Tool } from '@anthropic-ai/sdk/resources/messages/messages';
import { ModelError, type ModelEvent, type ModelMessage, type ModelRequest } from '../../core/turn/model-provider.js';
import { DEFAULT_BASE_URL, type ModelConfig } from './config.js';
import { ConfiguredProvider } from './configured-provider.js';
import { argumentsObject, CONTINUATION, hasText, nativeOf, splitLeadingSystem, systemNote, type NativeOrigin } from './conversation.js';
import { toModelError } from './errors.js';
import { lookupById } from './model-check.js';
import { DEFAULT_REQUEST_TIMEOUT_MS } from './openai-client.js';

const PROTOCOL = 'anthropic';
/** Anthropic requires a ceiling on every request; this one is used when quire.json gives none. */
const DEFAULT_MAX_TOKENS = 8192;

/** What an assistant entry keeps: the message's content blocks, thinking with its signature first. */
interface AnthropicNative extends NativeOrigin {
  content: ContentBlockParam[];
}

type FinishReason = Extract<ModelEvent, { type: 'finish' }>['reason'];

/** Anthropic Messages (PROTOCOLS.md §3.3): thinking blocks and their signatures go back unchanged. */
export class AnthropicProvider extends ConfiguredProvider {
  private readonly client: Anthropic;

  constructor(config: ModelConfig, key: { key: string; source: string }) {
    super(PROTOCOL, config);
    this.client = new Anthropic({ apiKey: key.key, baseURL: config.baseURL ?? DEFAULT_BASE_URL.anthropic, maxRetries: 0, timeout: config.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS });
    this.connectedTo(this.client.baseURL, key, lookupById(config.model, (signal) => this.client.models.retrieve(config.model, {}, { signal })));
  }

  async *stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelEvent> {
    const { config } = this;
    const { system, rest } = splitLeadingSystem(request.messages);
    // With thinking on, Anthropic accepts no temperature but its default.
    const temperature = config.reasoningEffort ? undefined : request.temperature ?? config.temperature;
    let stream: AsyncIterable<RawMessageStreamEvent>;
    try {
      stream = await this.client.messages.create({
        model: config.model,
        max_tokens: request.maxOutputTokens ?? config.maxOutputTokens ?? DEFAULT_MAX_TOKENS,
        // Blocks, not one joined text: the summary stays its own block after the rules.
        ...(system.length > 0 ? { system: system.map((text) => ({ type: 'text' as const, text })) } : {}),
        messages: toMessages(rest, this.origin),
        ...toolsOf(request, rest),
        // Summarised thinking is shown and keeps the stream alive: newer models default to none shown, and
        // minutes of silence read as a stalled stream.
        ...(config.reasoningEffort ? { thinking: { type: 'adaptive' as const, display: 'summarized' as const }, output_config: { effort: config.reasoningEffort === 'minimal' ? 'low' as const : config.reasoningEffort } } : {}),
        ...(temperature !== undefined ? { temperature } : {}),
        stream: true,
      }, { signal });
    } catch (error) {
      if (signal.aborted) return;
      throw this.failure(error);
    }
    // The blocks as they arrive, to keep for the next request; tool inputs are collected as JSON text.
    const blocks: (ContentBlockParam & { partial?: string })[] = [];
    const calls = new Set<number>();
    let input = 0;
    let cached = 0;
    let output = 0;
    let finish: FinishReason = 'other';
    let stopped = false;
    try {
      for await (const event of stream) {
        switch (event.type) {
          case 'message_start': {
            const usage = event.message.usage;
            cached = usage.cache_read_input_tokens ?? 0;
            input = usage.input_tokens + cached + (usage.cache_creation_input_tokens ?? 0);
            output = usage.output_tokens;
            yield { type: 'keepalive' };
            break;
          }
          case 'content_block_start': {
            const block = event.content_block;
            if (block.type === 'tool_use') {
              blocks[event.index] = { type: 'tool_use', id: block.id, name: block.name, input: {}, partial: '' };
              calls.add(event.index);
              yield { type: 'tool_call_start', index: event.index, id: block.id, name: block.name };
            } else if (block.type === 'text') {
              blocks[event.index] = { type: 'text', text: block.text };
              if (block.text !== '') yield { type: 'text', delta: block.text };
            } else if (block.type === 'thinking') {
              blocks[event.index] = { type: 'thinking', thinking: block.thinking, signature: block.signature };
              yield { type: 'keepalive' };
            } else if (block.type === 'redacted_thinking') {
              // Hidden reasoning arrives whole and silently: the watchdog must still see it.
              blocks[event.index] = { type: 'redacted_thinking', data: block.data };
              yield { type: 'keepalive' };
            }
            break;
          }
          case 'content_block_delta': {
            const block = blocks[event.index];
            const delta = event.delta;
            if (delta.type === 'text_delta' && block?.type === 'text') {
              block.text += delta.text;
              yield { type: 'text', delta: delta.text };
            } else if (delta.type === 'thinking_delta' && block?.type === 'thinking') {
              block.thinking += delta.thinking;
              yield { type: 'reasoning', delta: delta.thinking };
            } else if (delta.type === 'signature_delta' && block?.type === 'thinking') {
              block.signature += delta.signature;
              yield { type: 'keepalive' };
            } else if (delta.type === 'input_json_delta' && block?.type === 'tool_use') {
              block.partial = (block.partial ?? '') + delta.partial_json;
              yield { type: 'tool_call_delta', index: event.index, argumentsDelta: delta.partial_json };
            }
            break;
          }
          case 'content_block_stop': {
            const block = blocks[event.index];
            if (block?.type === 'tool_use') {
              block.input = argumentsObject(block.partial ?? '');
              delete block.partial;
              yield { type: 'tool_call_end', index: event.index };
            } else yield { type: 'keepalive' };
            break;
          }
          case 'message_delta': {
            // Cumulative counts: they replace, never add (PROTOCOLS.md §3.5).
            const usage = event.usage;
            output = usage.output_tokens ?? output;
            if (usage.input_tokens != null) {
              cached = usage.cache_read_input_tokens ?? cached;
              input = usage.input_tokens + cached + (usage.cache_creation_input_tokens ?? 0);
            }
            finish = finishReason(event.delta.stop_reason);
            yield { type: 'keepalive' };
            break;
          }
          case 'message_stop':
            stopped = true;
            break;
        }
      }
    } catch (error) {
      if (signal.aborted) return;
      throw this.failure(error);
    }
    if (signal.aborted) return;
    if (!stopped) throw new ModelError('server', 'the message stream ended before message_stop');
    yield { type: 'usage', promptTokens: input, completionTokens: output, cachedTokens: cached };
    // Empty text blocks are dropped: the API refuses them when they are sent back.
    const content = blocks.filter((block) => block !== undefined && (block.type !== 'text' || hasText(block.text)));
    // Kept to send back only when it holds signed thinking: the loop never compacts inside a turn whose
    // answers carry native state, and a long turn without thinking then failed (COMPACTION_FAILED) where
    // its text and calls, sent as such, say all there is.
    const signed = content.some((block) => block.type === 'thinking' || block.type === 'redacted_thinking');
    yield { type: 'finish', reason: finish, ...(signed ? { providerData: { ...this.origin, content } satisfies AnthropicNative } : {}) };
  }
}

function finishReason(reason: string | null): FinishReason {
  if (reason === 'end_turn' || reason === 'stop_sequence' || reason === 'pause_turn') return 'stop';
  if (reason === 'tool_use') return 'tool_calls';
  if (reason === 'max_tokens' || reason === 'model_context_window_exceeded') return 'length';
  if (reason === 'refusal') return 'content_filter';
  return 'other';
}

/**
 * The round's tools; none offered (the last round after maxToolRounds), the history's calls still need
 * theirs described ("Requests which include tool_use or tool_result blocks must define tools"): the
 * tools it called, by name, with `tool_choice: none`, so the model answers without calling.
 */
function toolsOf(request: ModelRequest, history: readonly ModelMessage[]): { tools?: Tool[]; tool_choice?: { type: 'none' } } {
  if (request.tools.length > 0) return { tools: request.tools.map(toTool) };
  const called = [...new Set(history.flatMap((message) => (message.role === 'assistant' ? (message.toolCalls ?? []).map((call) => call.name) : [])))];
  if (called.length === 0) return {};
  return { tools: called.map((name) => ({ name, description: 'Not offered now: answer without calling it.', input_schema: { type: 'object' } })), tool_choice: { type: 'none' } };
}

function toTool(tool: ModelRequest['tools'][number]): Tool {
  return { name: tool.name, description: tool.description, input_schema: { type: 'object', ...tool.inputSchema } };
}

/**
 * Messages alternate user and assistant: tool results and later system notes join the user turn that
 * follows them, so consecutive user content is merged into one message.
 */
function toMessages(messages: readonly ModelMessage[], origin: NativeOrigin): MessageParam[] {
  const out: MessageParam[] = [];
  const addUser = (blocks: ContentBlockParam[]) => {
    const last = out.at(-1);
    if (last?.role === 'user' && Array.isArray(last.content)) last.content.push(...blocks);
    else out.push({ role: 'user', content: blocks });
  };
  for (const message of messages) {
    if (message.role === 'user') addUser([{ type: 'text', text: hasText(message.content) ? message.content : '(no text)' }]);
    else if (message.role === 'system') addUser([{ type: 'text', text: systemNote(message.content) }]);
    else if (message.role === 'tool') addUser([{ type: 'tool_result', tool_use_id: message.toolCallId ?? '', content: hasText(message.content) ? message.content : '(no output)' }]);
    else {
      const native = nativeOf<AnthropicNative>(message.providerData, origin);
      const content: ContentBlockParam[] = (native ? native.content : [
        ...(hasText(message.content) ? [{ type: 'text' as const, text: message.content }] : []),
        ...(message.toolCalls ?? []).map((call) => ({ type: 'tool_use' as const, id: call.id, name: call.name, input: argumentsObject(call.arguments) })),
      ]).filter((block) => block.type !== 'text' || hasText(block.text));
      // An answer with nothing in it is left out; the person's turns around it merge.
      if (content.length === 0) continue;
      if (out.length === 0) out.push({ role: 'user', content: [{ type: 'text', text: CONTINUATION }] });
      out.push({ role: 'assistant', content });
    }
  }
  return out;
}
