import { ALL_EFFECTS, type Effect, type PluginManifest } from '../plugin-api.js';
import { wrapProvider, type ModelMessage, type ModelProvider, type ModelRequest } from './model-provider.js';

/** What stands in for a tool result that may not leave the machine. */
export const WITHHELD_MARKER = '[withheld: this tool result holds text from notebooks marked local-only (egress: local-only), and the model server is not on this machine. The person can read it in Quire; do not ask for it again.]';

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
  /** Told how many tool results a request went without. */
  onWithheld?(count: number): void;
}

/**
 * The messages as they may leave: a tool result holding content of a local-only notebook (or that
 * cannot say whose content it holds, while any notebook is local-only) is replaced by a marker.
 */
export function withholdLocalOnly(messages: readonly ModelMessage[], localOnly: ReadonlySet<string>): { messages: readonly ModelMessage[]; withheld: number } {
  if (localOnly.size === 0) return { messages, withheld: 0 };
  let withheld = 0;
  const out = messages.map((message) => {
    if (message.role !== 'tool' || message.released === true) return message;
    const notebooks = message.notebooks ?? 'all';
    const holds = notebooks === 'all' || notebooks.some((notebook) => localOnly.has(notebook));
    if (!holds) return message;
    withheld++;
    return { ...message, content: WITHHELD_MARKER };
  });
  return { messages: withheld > 0 ? out : messages, withheld };
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
      const { messages, withheld } = withholdLocalOnly(request.messages, policy.localOnly());
      if (withheld > 0) policy.onWithheld?.(withheld);
      return provider.stream(withheld > 0 ? { ...request, messages } : request, signal);
    },
  });
}

function outgoing(request: ModelRequest, policy: EgressPolicy): ModelRequest {
  const { messages, withheld } = withholdLocalOnly(request.messages, policy.localOnly());
  return withheld > 0 ? { ...request, messages } : request;
}
