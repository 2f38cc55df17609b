import type { Token } from './tokens.js';
import type { Logger } from './log.js';
import type { BackendHandle, BackendKind, BackendOf } from './backends/contracts.js';

/** The closed vocabulary of effects. An empty list means the action only reads. */
export type Effect = 'localWrite' | 'dataEgress' | 'externalCost';
export const ALL_EFFECTS: readonly Effect[] = Object.freeze(['localWrite', 'dataEgress', 'externalCost']);

/** A JSON Schema document (draft-07 subset understood by ajv). */
export type JsonSchema = { readonly [key: string]: unknown };

export interface ActionManifest {
  description: string;
  input: JsonSchema;
  output?: JsonSchema;
  effects: Effect[];
  /** Removes or overwrites something; a hint shown to people and exported as MCP destructiveHint. */
  destructive?: boolean;
  /** Calling twice with the same input has the effect of calling once. */
  idempotent?: boolean;
  /** Offered to the agent only, never on HTTP or MCP. */
  agentOnly?: boolean;
  /**
   * A person's setting (a notebook's privacy): the agent is never offered it and cannot call it,
   * whatever grant or session mode; MCP does not serve it either (its clients are agents).
   */
  personOnly?: boolean;
  /**
   * Refused to readers although it has no effects: it reads what a reader may not see (every notebook,
   * published or not; the agent's own instructions). The OpenAPI document says `x-quire-role: admin`.
   */
  adminOnly?: boolean;
  /**
   * `false`: the result never holds notes' content (a clock, a status, a skill), so it needs no
   * report of notebooks (ActionCall.returned) to be sent to a model.
   */
  returnsNotes?: boolean;
  /**
   * `false`: the action's writes go outside the notes it names (an export writes files elsewhere), so
   * a notebook the agent may only read (`agent: read`) does not refuse it.
   */
  changesNotes?: boolean;
  /**
   * Can run long (an import, a rebuild): runs as a job with progress and cancellation, bounded by
   * `actions.jobTimeoutMs` instead of the short call limit; over HTTP the call answers a job at once.
   */
  long?: boolean;
  /**
   * Calls the kernel's selected embedder or reranker: the action's effects, as the gate sees them, then
   * include that backend's (a semantic search through a remote embedder is egress).
   */
  backends?: BackendKind[];
  /**
   * The action cannot work without the backends it names: while one is not selected, the agent is not
   * offered it (the prompt never names a tool that cannot be called); HTTP and MCP callers get MODEL_UNAVAILABLE.
   */
  backendsRequired?: boolean;
}

export interface ToolManifest {
  name: string;
  title?: string;
  description: string;
  actions: Record<string, ActionManifest>;
}

/** A plugin manifest: static JSON, validated before any of the plugin's code is loaded. */
export interface PluginManifest {
  id: string;
  version: string;
  kernel: string;
  description: string;
  entry: string;
  requires?: string[];
  provides?: string[];
  /** Capabilities the plugin uses when some active plugin provides them, and does without otherwise (`ctx.find`). */
  uses?: string[];
  config?: JsonSchema;
  tools: ToolManifest[];
  providers?: BackendManifest[];
  embedders?: BackendManifest[];
  rerankers?: BackendManifest[];
}

/** A model provider, embedder or reranker a plugin offers, with what one call to it does. */
export interface BackendManifest {
  name: string;
  description: string;
  effects: Effect[];
}

/** Where a plugin came from; user and external plugins are untrusted unless the person says otherwise. */
export type PluginSource = 'native' | 'user' | 'mcp';

export type Role = 'admin' | 'reader';

/** Who is calling: a person (HTTP, CLI), the agent (inside a turn), an MCP client, or the kernel itself. */
export interface Principal {
  kind: 'person' | 'agent' | 'mcp' | 'kernel';
  /** The token name, or `agent:<session>/<turn>/<call>` for the agent. */
  name: string;
  role: Role;
  sessionId?: string;
  turnId?: string;
  /** For an MCP caller: the client program, as it named itself when it connected (Claude Desktop, Cursor...). */
  client?: string;
}

/** What a handler receives besides its (already validated) input. */
export interface ActionCall {
  readonly callId: string;
  readonly principal: Principal;
  /**
   * Notebooks that a deny rule in quire.json keeps this caller (the agent) out of for this action.
   * The gate refuses a call that names one; an action that reads across notebooks (a search, a listing)
   * must leave them out of what it returns.
   */
  readonly deniedNotebooks: ReadonlySet<string>;
  /**
   * Notebooks this caller may read but never change (the agent, where a notebook's privacy says
   * `agent: read`). The gate refuses a write that names one; an action that changes several notebooks
   * at once (a snapshot rollback) must refuse when it would change one of these or of deniedNotebooks.
   */
  readonly readOnlyNotebooks: ReadonlySet<string>;
  /**
   * Says which notebooks' content this call's result holds (call it for each part returned; with
   * nothing, it says "none"). A result whose action neither reports nor declares `returnsNotes: false`
   * counts as holding every notebook: the turn withholds it from a model server off this machine
   * while any notebook is marked `egress: local-only`.
   */
  returned(notebooks: Iterable<string>): void;
  /** Aborted when the call is cancelled or reaches its time limit; the reason is a KernelError. */
  readonly signal: AbortSignal;
  /**
   * Why the call must stop, once it must: checked at safe points (between documents, before each file)
   * by any action that writes more than once. Cheaper than `signal` for a hot path; reading either
   * tells the kernel this handler stops by itself, so a stopped call is waited for and its own
   * answer (what it did before stopping) is reported.
   */
  readonly stopped: StopReason | undefined;
  /** Reports how far the call has come; shown as a job's progress, an MCP progress notification, a bar. */
  progress(update: ProgressUpdate): void;
  readonly log: Logger;
}

/** Why a call was stopped before it finished. */
export type StopReason = 'time_limit' | 'cancelled';

export interface ProgressUpdate {
  /** Units done so far (documents, files, blocks). */
  done: number;
  /** Units in all, when known. */
  total?: number;
  message?: string;
  /**
   * What becomes of the work done so far should the kernel stop (a crash) before the call answers; a
   * job's record says it at the next start (an import: undone then).
   */
  ifInterrupted?: string;
}

export type ActionHandler<I = Record<string, unknown>, O = unknown> = (input: I, call: ActionCall) => O | Promise<O>;

/** tool name → action name → handler; the names must equal the manifest's exactly. */
export type PluginHandlers = Record<string, Record<string, ActionHandler>>;

/**
 * What `activate` gets: the plugin's config, a logger tagged with its id, and access to exactly the
 * services its manifest `requires` (`get`) and `provides` (`provide`); anything else is CAPABILITY_DENIED.
 *
 * @example
 * activate(ctx) {
 *   const workspace = ctx.get(WORKSPACE);          // manifest lists "core.workspace" in requires
 *   ctx.provide(GREETER, createGreeter());         // manifest lists "hello.greeter" in provides
 *   ctx.onDispose(() => ctx.log.info('bye'));
 *   return { hello: { greet: (input) => ({ text: `Hello, ${String(input.name)}` }) } };
 * }
 */
export interface PluginContext<C = Record<string, unknown>> {
  readonly id: string;
  readonly config: C;
  readonly log: Logger;
  /** A service the manifest `requires`, by token or (from plain JavaScript) by capability name. */
  get<T>(token: Token<T> | string): T;
  /** Offers a service the manifest `provides`. */
  provide<T>(token: Token<T> | string, value: T): void;
  /**
   * A capability the manifest lists in `uses`, or undefined while no active plugin provides it. Ask at
   * call time, not in `activate`: the provider may be activated later, or not at all.
   */
  find<T>(token: Token<T> | string): T | undefined;
  /** Offers an embedder or reranker that the manifest lists under `embedders` / `rerankers` with this name. */
  provideBackend<K extends BackendKind>(kind: K, name: string, backend: BackendOf[K]): void;
  /**
   * Says that the embedder or reranker listed under this name cannot be offered, and why (its key's
   * variable unset, a bad address): a selection naming it answers that reason, at start and at each call.
   * `field`: the quire.json path of the cause (slashes), e.g. `plugins/my-plugin/config/apiKeyEnv`.
   */
  declineBackend(kind: BackendKind, name: string, reason: { message: string; field?: string }): void;
  /**
   * The embedder or reranker quire.json names (`<plugin id>` or `<plugin id>/<name>`); `field` is that
   * setting's path, named in errors. Resolved at each `current()`, so the offering plugin may activate later.
   */
  selectBackend<K extends BackendKind>(kind: K, ref: string, field: string): BackendHandle<K>;
  onDispose(fn: () => void | Promise<void>): void;
}

export interface PluginDefinition<C = Record<string, unknown>> {
  activate(ctx: PluginContext<C>): PluginHandlers | Promise<PluginHandlers>;
}

/**
 * Declares a plugin; the default export of every plugin entry module.
 *
 * @example
 * import { definePlugin } from 'quire/plugin';
 * export default definePlugin({
 *   activate(ctx) {
 *     return { hello: { greet: (input) => ({ text: `Hello, ${String(input.name)}` }) } };
 *   },
 * });
 */
export function definePlugin<C = Record<string, unknown>>(definition: PluginDefinition<C>): PluginDefinition<C> {
  return definition;
}
