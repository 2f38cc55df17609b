import { randomUUID } from 'node:crypto';
import { GoogleGenAI, ThinkingLevel, type Content, type FunctionDeclaration, type GenerateContentResponse, type Part } from '@google/genai';
import { ModelError, type ModelEvent, type ModelMessage, type ModelRequest } from '../../core/turn/model-provider.js';
import { DEFAULT_BASE_URL, type ModelConfig, type ReasoningEffort } from './config.js';
import { ConfiguredProvider } from './configured-provider.js';
import { argumentsObject, CONTINUATION, hasText, nativeOf, splitLeadingSystem, systemNote, type NativeOrigin } from './conversation.js';
import { toModelError } from './errors.js';
import { lookupById } from './model-check.js';

const PROTOCOL = 'gemini';
const MADE_UP = 'gemini-call-';

/** What an assistant entry keeps: the model's parts exactly, each thought signature on its own part. */
interface GeminiNative extends NativeOrigin {
  parts: Part[];
}

type FinishReason = Extract<ModelEvent, { type: 'finish' }>['reason'];

const LEVEL: Readonly<Record<ReasoningEffort, ThinkingLevel>> = { minimal: ThinkingLevel.MINIMAL, low: ThinkingLevel.LOW, medium: ThinkingLevel.MEDIUM, high: ThinkingLevel.HIGH };

/**
 * Gemini through `@google/genai` (PROTOCOLS.md §3.4). Function calls arrive whole; ids are made up when
 * the server gives none, and results are matched back to calls by those ids and sent by name.
 */
export class GeminiProvider extends ConfiguredProvider {
  private readonly client: GoogleGenAI;

  constructor(config: ModelConfig, key: { key: string; source: string }) {
    super(PROTOCOL, config);
    const baseURL = config.baseURL ?? DEFAULT_BASE_URL.gemini;
    // No SDK retries (the turn loop decides) and no SDK timeout: it would cover the whole body, and a
    // long answer is not a stalled one; the turn loop's idle watchdog handles silences.
    this.client = new GoogleGenAI({ apiKey: key.key, httpOptions: { baseUrl: baseURL } });
    this.connectedTo(baseURL, key, lookupById(config.model, (signal) => this.client.models.get({ model: config.model, config: { abortSignal: signal } })));
  }

  async *stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelEvent> {
    const { config } = this;
    const { system, rest } = splitLeadingSystem(request.messages);
    const maxTokens = request.maxOutputTokens ?? config.maxOutputTokens;
    const temperature = request.temperature ?? config.temperature;
    const parts: Part[] = [];
    let calls = 0;
    // Ids the server did not give must still be unique in the session, where calls are kept by id.
    const madeUp = `${MADE_UP}${randomUUID().slice(0, 8)}-`;
    let usage: GenerateContentResponse['usageMetadata'];
    let finish: FinishReason | undefined;
    try {
      const stream = await this.client.models.generateContentStream({
        model: config.model,
        contents: toContents(rest, this.origin),
        config: {
          abortSignal: signal,
          // Parts, not one joined text: the summary stays its own part after the rules.
          ...(system.length > 0 ? { systemInstruction: { parts: system.map((text) => ({ text })) } } : {}),
          ...(request.tools.length > 0 ? { tools: [{ functionDeclarations: request.tools.map(toDeclaration) }] } : {}),
          ...(maxTokens !== undefined ? { maxOutputTokens: maxTokens } : {}),
          ...(temperature !== undefined ? { temperature } : {}),
          ...(config.reasoningEffort ? { thinkingConfig: { includeThoughts: true, thinkingLevel: LEVEL[config.reasoningEffort] } } : {}),
        },
      });
      // The SDK answers once the server took the request (its status checked): said at once, so that a
      // request then silent (thinking not shown) is tried once more, not as often as one never answered.
      yield { type: 'keepalive' };
      for await (const chunk of stream) {
        // Each chunk's usage is the request's running total: the last one counts (PROTOCOLS.md §3.5).
        if (chunk.usageMetadata) usage = chunk.usageMetadata;
        // A refused prompt has no candidates, only the reason: that is an answer, not a server failure.
        if (chunk.promptFeedback?.blockReason) finish = 'content_filter';
        const candidate = chunk.candidates?.[0];
        const chunkParts = candidate?.content?.parts ?? [];
        if (chunkParts.length === 0) yield { type: 'keepalive' };
        for (const part of chunkParts) {
          // Empty text is dropped unless it carries a thought signature (which must go back on its part).
          if (!part.functionCall && (part.text === undefined || part.text === '') && !part.thoughtSignature) continue;
          parts.push(part);
          if (part.functionCall) {
            const index = calls++;
            const id = part.functionCall.id ?? `${madeUp}${index}`;
            yield { type: 'tool_call_start', index, id, name: part.functionCall.name ?? '' };
            yield { type: 'tool_call_delta', index, argumentsDelta: JSON.stringify(part.functionCall.args ?? {}) };
            yield { type: 'tool_call_end', index };
          } else if (typeof part.text === 'string' && part.text !== '') {
            yield part.thought ? { type: 'reasoning', delta: part.text } : { type: 'text', delta: part.text };
          }
        }
        if (candidate?.finishReason) finish = finishReason(candidate.finishReason, calls > 0);
      }
    } catch (error) {
      if (signal.aborted) return;
      throw this.failure(error);
    }
    if (signal.aborted) return;
    if (finish === undefined) throw new ModelError('server', 'the stream ended without a finish reason');
    if (usage) {
      const prompt = (usage.promptTokenCount ?? 0) + (usage.toolUsePromptTokenCount ?? 0);
      yield { type: 'usage', promptTokens: prompt, completionTokens: (usage.candidatesTokenCount ?? 0) + (usage.thoughtsTokenCount ?? 0), cachedTokens: usage.cachedContentTokenCount ?? 0, reasoningTokens: usage.thoughtsTokenCount ?? 0 };
    }
    // Kept only with a thought signature to send back (see anthropic.ts: a turn holding native state is never compacted inside).
    const signed = parts.some((part) => part.thoughtSignature !== undefined);
    yield { type: 'finish', reason: finish, ...(signed ? { providerData: { ...this.origin, parts } satisfies GeminiNative } : {}) };
  }
}

function finishReason(reason: string, called: boolean): FinishReason {
  if (reason === 'STOP') return called ? 'tool_calls' : 'stop';
  if (reason === 'MAX_TOKENS') return 'length';
  if (reason === 'SAFETY' || reason === 'RECITATION' || reason === 'BLOCKLIST' || reason === 'PROHIBITED_CONTENT' || reason === 'SPII') return 'content_filter';
  return 'other';
}

function toDeclaration(tool: ModelRequest['tools'][number]): FunctionDeclaration {
  return { name: tool.name, description: tool.description, parametersJsonSchema: tool.inputSchema };
}

/** Contents alternate user and model; tool results are user parts naming the function they answer. */
function toContents(messages: readonly ModelMessage[], origin: NativeOrigin): Content[] {
  const out: Content[] = [];
  const names = new Map<string, string>();
  const add = (role: 'user' | 'model', parts: Part[]) => {
    const last = out.at(-1);
    if (last?.role === role && role === 'user') last.parts!.push(...parts);
    else out.push({ role, parts });
  };
  for (const message of messages) {
    if (message.role === 'user') add('user', [{ text: hasText(message.content) ? message.content : '(no text)' }]);
    else if (message.role === 'system') add('user', [{ text: systemNote(message.content) }]);
    else if (message.role === 'tool') {
      const id = message.toolCallId ?? '';
      const made = id.startsWith(MADE_UP);
      add('user', [{ functionResponse: { ...(made ? {} : { id }), name: names.get(id) ?? '', response: { output: message.content } } }]);
    } else {
      for (const call of message.toolCalls ?? []) names.set(call.id, call.name);
      const native = nativeOf<GeminiNative>(message.providerData, origin);
      const parts: Part[] = native ? native.parts : [
        ...(hasText(message.content) ? [{ text: message.content }] : []),
        // The call keeps its id (another protocol's, after a switch) so that its response can name it.
        ...(message.toolCalls ?? []).map((call) => ({ functionCall: { ...(call.id.startsWith(MADE_UP) ? {} : { id: call.id }), name: call.name, args: argumentsObject(call.arguments) } })),
      ];
      if (parts.length === 0) continue;
      if (out.length === 0) out.push({ role: 'user', parts: [{ text: CONTINUATION }] });
      add('model', parts);
    }
  }
  return out;
}
