import { randomUUID } from 'node:crypto';
import OpenAI from 'openai';
import type { ChatCompletionChunk, ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { ModelError, type ModelEvent, type ModelMessage, type ModelRequest } from '../../core/turn/model-provider.js';
import type { ModelConfig } from './config.js';
import { ConfiguredProvider } from './configured-provider.js';
import { splitLeadingSystem, systemNote } from './conversation.js';
import { toModelError } from './errors.js';
import { openAIClient, openAIModelLookup } from './openai-client.js';

type FinishReason = Extract<ModelEvent, { type: 'finish' }>['reason'];

/** OpenAI Chat Completions, and every server that speaks it (PROTOCOLS.md §3.1). */
export class OpenAIChatProvider extends ConfiguredProvider {
  private readonly client: OpenAI;

  constructor(config: ModelConfig, key: { key: string; source: string }) {
    super('openai-chat', config);
    this.client = openAIClient(config, key.key);
    this.connectedTo(this.client.baseURL, key, openAIModelLookup(this.client, config.model));
  }

  async *stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelEvent> {
    const { config } = this;
    const maxTokens = request.maxOutputTokens ?? config.maxOutputTokens;
    const temperature = request.temperature ?? config.temperature;
    let stream: AsyncIterable<ChatCompletionChunk>;
    try {
      stream = await this.client.chat.completions.create({
        model: config.model,
        messages: toChatMessages(request.messages, midSystemAllowed(this.client.baseURL)),
        ...(request.tools.length > 0 ? { tools: request.tools.map(toChatTool) } : {}),
        stream: true,
        stream_options: { include_usage: true },
        ...(maxTokens !== undefined ? { max_completion_tokens: maxTokens } : {}),
        ...(temperature !== undefined ? { temperature } : {}),
        ...(config.reasoningEffort ? { reasoning_effort: config.reasoningEffort } : {}),
      }, { signal });
    } catch (error) {
      if (signal.aborted) return;
      throw this.failure(error);
    }
    // The server took the request (its answer's headers came): a silence from here on may be the model at
    // work (an o-series model thinks without streaming), and the turn loop repeats such a request once only.
    yield { type: 'keepalive' };
    const started = new Set<number>();
    // Some compatible servers send no call ids: made-up ones must still be unique in the session.
    const madeUp = `call_${randomUUID().slice(0, 8)}_`;
    // The server's index of a call → ours: a compatible server that streams every call at index 0 (or
    // none) starts another call with a new id, which merged into the first (its arguments appended).
    const slots = new Map<number, { slot: number; id: string | undefined; name: string; args: string; pending?: string | undefined }>();
    let nextSlot = 0;
    let finish: FinishReason | undefined;
    // The last usage seen, told once at the end: compatible servers (vLLM's continuous usage stats) send
    // the running total on every chunk, and adding them up counted the prompt once per chunk.
    let usage: ModelEvent | undefined;
    try {
      for await (const chunk of stream) {
        if (chunk.usage) {
          usage = { type: 'usage', promptTokens: chunk.usage.prompt_tokens, completionTokens: chunk.usage.completion_tokens, cachedTokens: chunk.usage.prompt_tokens_details?.cached_tokens ?? 0, reasoningTokens: chunk.usage.completion_tokens_details?.reasoning_tokens ?? 0 };
        }
        const choice = chunk.choices[0];
        if (!choice) {
          if (!chunk.usage) yield { type: 'keepalive' };
          continue;
        }
        const delta = choice.delta as ChatCompletionChunk.Choice.Delta & { reasoning_content?: unknown; reasoning?: unknown };
        // Compatible servers (vLLM, DeepSeek, llama.cpp) stream their reasoning beside the content.
        const reasoning = typeof delta.reasoning_content === 'string' ? delta.reasoning_content : typeof delta.reasoning === 'string' ? delta.reasoning : '';
        const text = typeof delta.content === 'string' ? delta.content : '';
        if (reasoning !== '') yield { type: 'reasoning', delta: reasoning };
        if (text !== '') yield { type: 'text', delta: text };
        for (const call of delta.tool_calls ?? []) {
          const key = typeof call.index === 'number' ? call.index : -1;
          let current = slots.get(key);
          // Another call at a slot in use: a new id, or a name again without the slot's id (a server that
          // sends parallel calls without ids, all at one index: they were merged, the second's arguments
          // appended to the first's and the second call lost). A call's name comes once (OpenAI's wire).
          // A repeated name splits only when it cannot be the same call again: another name, or arguments
          // already whole (some servers repeat the name, or send null for it, in every chunk of one call).
          const name = typeof call.function?.name === 'string' ? call.function.name : '';
          const own = call.function?.arguments ?? '';
          const again = name !== '' && current !== undefined && started.has(current.slot) && !(call.id && call.id === current.id)
            && (name !== current.name || isWholeJson(current.args));
          // The same name with no arguments of its own: another call's first chunk, or a last chunk repeating
          // it. Only arguments that follow tell: until then it starts nothing.
          if (again && name === current!.name && own.trim() === '' && !call.id) {
            current!.pending = name;
            continue;
          }
          const resumed = !again && current?.pending !== undefined && own.trim() !== '' ? current.pending : undefined;
          if (current) current.pending = undefined;
          if (!current || (call.id && current.id !== undefined && call.id !== current.id) || again || resumed !== undefined) {
            current = { slot: nextSlot++, id: undefined, name: '', args: '' };
            slots.set(key, current);
          }
          if (call.id) current.id = call.id;
          const index = current.slot;
          const callName = call.function?.name || resumed;
          if (!started.has(index) && callName) {
            started.add(index);
            current.name = callName;
            yield { type: 'tool_call_start', index, id: current.id ?? `${madeUp}${index}`, name: callName };
          }
          if (started.has(index) && call.function?.arguments) {
            current.args += call.function.arguments;
            yield { type: 'tool_call_delta', index, argumentsDelta: call.function.arguments };
          }
        }
        if (choice.finish_reason) finish = finishReason(choice.finish_reason);
        if (reasoning === '' && text === '' && !delta.tool_calls?.length) yield { type: 'keepalive' };
      }
    } catch (error) {
      // What the server billed so far still counts (a cut or stopped answer).
      if (usage) yield usage;
      if (signal.aborted) return;
      throw this.failure(error);
    }
    // The SDK ends a stream quietly when it is aborted: that is not an answer.
    if (signal.aborted) {
      if (usage) yield usage;
      return;
    }
    // The SDK also ends quietly when the connection drops mid-answer: no finish reason, no whole answer.
    if (finish === undefined) {
      // A dropped connection: what the server billed so far still counts.
      if (usage) yield usage;
      throw new ModelError('server', 'the stream ended without a finish reason');
    }
    if (usage) yield usage;
    for (const index of [...started].sort((a, b) => a - b)) yield { type: 'tool_call_end', index };
    yield { type: 'finish', reason: finish };
  }
}

/** Whether `text` is a whole JSON value; parsed only when it ends as an object or array can (each chunk asks). */
function isWholeJson(text: string): boolean {
  const end = text.trimEnd().at(-1);
  if (end !== '}' && end !== ']') return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function finishReason(reason: string): FinishReason {
  if (reason === 'stop' || reason === 'tool_calls' || reason === 'length' || reason === 'content_filter') return reason;
  return reason === 'function_call' ? 'tool_calls' : 'other';
}

function toChatTool(tool: ModelRequest['tools'][number]): ChatCompletionTool {
  return { type: 'function', function: { name: tool.name, description: tool.description, parameters: { ...tool.inputSchema } } };
}

/**
 * Whether the server takes a system message after the first turn: OpenAI's own API (and Azure's) does;
 * the chat templates of many models a compatible server runs (vLLM, llama.cpp: Qwen, Mistral, Gemma)
 * refuse one that is not first, with a 400 that ended the turn just when a warning was added.
 */
function midSystemAllowed(baseURL: string): boolean {
  const host = new URL(baseURL).hostname;
  return host === 'api.openai.com' || host.endsWith('.openai.azure.com');
}

function toChatMessages(messages: readonly ModelMessage[], midSystem: boolean): ChatCompletionMessageParam[] {
  const { system, rest } = splitLeadingSystem(messages);
  const out: ChatCompletionMessageParam[] = system.map((content) => ({ role: 'system', content }));
  for (const message of rest) {
    // Elsewhere it travels as the person's message, marked as the kernel's note (as for Anthropic and Gemini).
    if (message.role === 'system') out.push(midSystem ? { role: 'system', content: message.content } : { role: 'user', content: systemNote(message.content) });
    else if (message.role === 'user') out.push({ role: 'user', content: message.content });
    else if (message.role === 'tool') out.push({ role: 'tool', tool_call_id: message.toolCallId ?? '', content: message.content });
    else {
      const calls = message.toolCalls ?? [];
      out.push({
        role: 'assistant',
        content: message.content === '' && calls.length > 0 ? null : message.content,
        ...(calls.length > 0 ? { tool_calls: calls.map((call) => ({ id: call.id, type: 'function' as const, function: { name: call.name, arguments: call.arguments } })) } : {}),
      });
    }
  }
  return out;
}
