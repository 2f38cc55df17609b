import type { ModelMessage, ModelToolSpec } from './model-provider.js';
import { estimateMessage, estimateRequest, countText } from './compaction-tokens.js';
import { withholdLocalOnly, type EgressPolicy } from './egress-filter.js';
import { worstCaseCost, type ModelPrice } from '../usage/prices.js';

export interface PreviewInput {
  provider: { id: string; model?: string };
  policy: EgressPolicy;
  system: string;
  tools: readonly ModelToolSpec[];
  /** The stored history as the model is given it, then the new message. */
  history: readonly ModelMessage[];
  message: string;
  maxOutputTokens?: number;
  contextLimit?: number;
  /** The model's price (usage.prices), when quire.json has one. */
  price?: ModelPrice;
}

/** One message as it would leave: its role, text, token estimate, and whose notes it holds. */
export interface PreviewMessage {
  role: ModelMessage['role'];
  content: string;
  tokens: number;
  toolCallId?: string;
  toolCalls?: { id: string; name: string; arguments: string }[];
  notebooks?: readonly string[] | 'all';
  withheld?: true;
  released?: true;
}

/**
 * What the next request of a turn would send, without calling the model (GET …/preview): the system
 * prompt, the tools, the messages after the local-only rule, their token estimates (the tokenizer
 * compaction uses), whose notes are in it, what would be withheld, and its estimated cost: the prompt
 * at the input price plus the largest answer allowed at the output price (null: no price, or no bound).
 */
export function previewRequest(input: PreviewInput) {
  const messages: ModelMessage[] = [{ role: 'system', content: input.system }, ...input.history, { role: 'user', content: input.message }];
  const localOnly = input.policy.localOnly();
  const sent = input.policy.egress ? withholdLocalOnly(messages, localOnly) : { messages, withheld: 0, answers: 0 };
  const notebooks = new Set<string>();
  let unknown = false;
  const shown: PreviewMessage[] = sent.messages.map((message, i) => {
    const original = messages[i]!;
    const withheld = message.content !== original.content;
    // An earlier answer counts with the notes its model had been shown (it may quote them).
    if (!withheld && (message.role === 'tool' || (message.role === 'assistant' && message.notebooks !== undefined))) {
      if (message.notebooks === undefined || message.notebooks === 'all') unknown = true;
      else for (const notebook of message.notebooks) notebooks.add(notebook);
    }
    return {
      role: message.role, content: message.content, tokens: estimateMessage(message, false),
      ...(message.toolCallId !== undefined ? { toolCallId: message.toolCallId } : {}),
      ...(message.toolCalls ? { toolCalls: message.toolCalls.map(({ id, name, arguments: args }) => ({ id, name, arguments: args })) } : {}),
      ...(message.role === 'tool' ? { notebooks: original.notebooks ?? 'all' } : message.role === 'assistant' && original.notebooks !== undefined ? { notebooks: original.notebooks } : {}),
      ...(withheld ? { withheld: true as const } : {}), ...(message.released === true ? { released: true as const } : {}),
    };
  });
  const tokens = estimateRequest(sent.messages, input.tools, false);
  const names = input.policy.names();
  return {
    provider: { id: input.provider.id, ...(input.provider.model ? { model: input.provider.model } : {}), to: input.policy.to, sendsDataAway: input.policy.egress },
    tools: input.tools.map((tool) => ({ name: tool.name, tokens: 10 + countText(`${tool.name} ${tool.description} ${JSON.stringify(tool.inputSchema)}`, false) })),
    messages: shown,
    tokens: { prompt: tokens, ...(input.maxOutputTokens !== undefined ? { maxOutput: input.maxOutputTokens } : {}), ...(input.contextLimit !== undefined ? { contextLimit: input.contextLimit } : {}) },
    ...(input.contextLimit !== undefined && tokens + (input.maxOutputTokens ?? 0) > input.contextLimit ? { compaction: 'the history would be summarised first: the request does not fit the context' } : {}),
    notebooks: { ids: [...notebooks].map((id) => ({ id, name: names.get(id) ?? id, localOnly: localOnly.has(id) })), unknown },
    withheld: sent.withheld,
    ...(sent.answers > 0 ? { withheldAnswers: sent.answers } : {}),
    cost: input.maxOutputTokens === undefined ? null : worstCaseCost(tokens, input.maxOutputTokens, input.price),
    ...(input.price === undefined ? { costNote: 'no price for this model in usage.prices' } : input.maxOutputTokens === undefined ? { costNote: 'no bound on the answer (maxOutputTokens), so no upper bound on the cost' } : {}),
  };
}
