import { ALL_EFFECTS, type Effect, type PluginManifest } from '../plugin-api.js';
import { wrapProvider, type ModelMessage, type ModelProvider, type ModelRequest } from './model-provider.js';

/** What stands in for a tool result that may not leave the machine. */
export const WITHHELD_MARKER = '[withheld: this tool result holds text from notebooks marked local-only (egress: local-only), and the model server is not on this machine. The person can read it in Quire; do not ask for it again.]';

/** What stands in for an earlier answer written from such text (by a model on this machine): it may quote it. */
export const ANSWER_WITHHELD_MARKER = '[withheld: this earlier answer was written by a model on this machine from notes of notebooks marked local-only (egress: local-only), and may quote them; the model server now is not on this machine. The person can read it in Quire.]';

/** Whether content drawn from these notebooks (unknown: any) holds notes of a local-only one. */
function holdsLocalOnly(notebooks: readonly string[] | 'all', localOnly: ReadonlySet<string>): boolean {
  return notebooks === 'all' ? localOnly.size > 0 : notebooks.some((notebook) => localOnly.has(notebook));
}

/**
 * The effects of sending a request to this model provider, as the manifest of the plugin that
 * provides the model declares them for it (its `providers` entry named by the provider's `entry`, else
 * its id). A provider the manifest does not list counts as sending data away and costing money.
 */
export function modelEffects(manifest: PluginManifest | undefined, provider: Pick<ModelProvider, 'id' | 'entry'>): readonly Effect[] {
  const name = provider.entry ?? provider.id;
  return manifest?.providers?.find((entry) => entry.name === name)?.effects ?? ALL_EFFECTS;
}

export interface EgressPolicy {
  /** Whether requests leave the machine (the provider's manifest entry declares dataEgress). */
  readonly egress: boolean;
  /** The model's server as the person knows it (shown when asked to release a result). */
  readonly to: string;
  /** The notebooks' names, for the person. */
  names(): ReadonlyMap<string, string>;
  /** The notebooks marked local-only now (read at each request: a person may change it mid-turn). */
  localOnly(): ReadonlySet<string>;
  /** Told how many tool results, and earlier answers written from them, a request went without. */
  onWithheld?(count: number, answers: number): void;
}

/**
 * The messages as they may leave: a tool result holding content of a local-only notebook (or that
 * cannot say whose content it holds, while any notebook is local-only) is replaced by a marker, and so
 * is an assistant message written from such content (its `notebooks`, see `notebooksSeen`): its text,
 * its calls' arguments (which may carry that text into a write) and its provider's native state.
 * `withheld` counts the tool results, `answers` the assistant messages.
 */
export function withholdLocalOnly(messages: readonly ModelMessage[], localOnly: ReadonlySet<string>): { messages: readonly ModelMessage[]; withheld: number; answers: number } {
  if (localOnly.size === 0) return { messages, withheld: 0, answers: 0 };
  let withheld = 0;
  let answers = 0;
  // The calls of a withheld answer: their results may repeat what their arguments said (a question's
  // text, a to-do list), recorded as holding no notes; they are withheld with it.
  const echoing = new Set<string>();
  const out = messages.map((message) => {
    if (message.role === 'assistant') {
      if (message.notebooks === undefined || !holdsLocalOnly(message.notebooks, localOnly)) return message;
      answers++;
      for (const call of message.toolCalls ?? []) echoing.add(call.id);
      return withheldCopy(message);
    }
    if (message.role !== 'tool' || message.released === true) return message;
    if (!holdsLocalOnly(message.notebooks ?? 'all', localOnly) && !echoing.has(message.toolCallId ?? '')) return message;
    withheld++;
    return withheldCopy(message);
  });
  return { messages: withheld + answers > 0 ? out : messages, withheld, answers };
}

/**
 * Each message's withheld form, made once: the same object round after round, so that the estimates of
 * the history as it leaves (compaction-tokens.ts) follow it by identity instead of counting it again.
 */
const withheldCopies = new WeakMap<ModelMessage, ModelMessage>();

function withheldCopy(message: ModelMessage): ModelMessage {
  let copy = withheldCopies.get(message);
  if (copy === undefined) {
    if (message.role === 'assistant') {
      const { providerData: _native, ...rest } = message;
      copy = { ...rest, content: ANSWER_WITHHELD_MARKER, ...(message.toolCalls ? { toolCalls: message.toolCalls.map((call) => ({ id: call.id, name: call.name, arguments: '{}' })) } : {}) };
    } else copy = { ...message, content: WITHHELD_MARKER };
    Object.freeze(copy);
    withheldCopies.set(message, copy);
  }
  return copy;
}

/**
 * The notebooks whose notes a model on this machine has been shown in a history (it sees every result):
 * the tool results' (unknown: every notebook) and those earlier answers carry. Its answer is recorded
 * with them, so that an answer it wrote from local-only notes is withheld later from a model off this
 * machine (after a provider switch) as the notes themselves are. Taken over the whole history, not the
 * request: a compaction summary the model wrote holds what it covers. A result the person released is
 * theirs to send: it marks nothing. Undefined when the history shows no notes. (A model off this
 * machine has been sent only what it may be sent: its answers are not recorded.)
 */
export function notebooksSeen(messages: readonly ModelMessage[]): readonly string[] | 'all' | undefined {
  const seen = new Set<string>();
  for (const message of messages) {
    let notebooks: readonly string[] | 'all' | undefined;
    if (message.role === 'tool' && message.released !== true) notebooks = message.notebooks ?? 'all';
    else if (message.role === 'assistant') notebooks = message.notebooks;
    if (notebooks === undefined) continue;
    if (notebooks === 'all') return 'all';
    for (const notebook of notebooks) seen.add(notebook);
  }
  return seen.size > 0 ? [...seen].sort() : undefined;
}

/**
 * The provider as the turn uses it: every request (each round, its retries, compaction's summaries)
 * goes through the filter first when the provider sends data away.
 */
export function guardModelEgress(provider: ModelProvider, policy: EgressPolicy): ModelProvider {
  if (!policy.egress) return provider;
  return wrapProvider(provider, {
    // The budget weighs the request as it will leave.
    ...(provider.beforeRequest ? { beforeRequest: (request: ModelRequest, signal: AbortSignal) => provider.beforeRequest!(outgoing(request, policy), signal) } : {}),
    stream(request: ModelRequest, signal: AbortSignal) {
      const { messages, withheld, answers } = withholdLocalOnly(request.messages, policy.localOnly());
      if (withheld + answers > 0) policy.onWithheld?.(withheld, answers);
      return provider.stream(withheld + answers > 0 ? { ...request, messages } : request, signal);
    },
  });
}

function outgoing(request: ModelRequest, policy: EgressPolicy): ModelRequest {
  const { messages, withheld, answers } = withholdLocalOnly(request.messages, policy.localOnly());
  return withheld + answers > 0 ? { ...request, messages } : request;
}
