import { AsyncLocalStorage } from 'node:async_hooks';
import { injectable } from '../di.js';
import { runInActionScope, type RunningAction } from '../egress/action-scope.js';
import { KernelError } from '../errors.js';
import { effectiveEffects } from '../gate/effects.js';
import type { Logger } from '../log.js';
import type { Effect, PluginSource } from '../plugin-api.js';
import type { BackendCaller, BackendHandle, BackendKind, BackendOf, SelectedBackend } from './contracts.js';

interface Registered<K extends BackendKind> extends SelectedBackend<K> {
  kind: K;
}

interface Selection {
  ref: string;
  /** The quire.json field that made it, named in errors. */
  field: string;
  plugin: string;
}

/**
 * The embedders and rerankers plugins offer (DESIGN.md §6), and which one of each kind the kernel uses.
 * One selection per kind for the whole kernel: the actions that declare `backends` carry the effects of
 * the selected backend, so an agent's search through a remote embedder goes to the person like any egress.
 */
@injectable()
export class BackendRegistry {
  private readonly offered = new Map<string, Registered<BackendKind>>();
  /** Backends their plugin could not offer (a key's variable unset, a bad address), with why. */
  private readonly declined = new Map<string, Declined>();
  private readonly selections = new Map<BackendKind, Selection>();
  private meter: BackendMeter | undefined;

  /** Told of every successful call to a billed backend (externalCost): the usage ledger's feed. */
  onUse(meter: BackendMeter): void {
    this.meter = meter;
  }

  /** Adds a backend; `declared` is its manifest entry's effects, which every call is held to. */
  provide<K extends BackendKind>(kind: K, plugin: string, name: string, raw: BackendOf[K], declared: readonly Effect[], source: PluginSource, trusted: boolean, log: Logger): () => void {
    const key = keyOf(kind, plugin, name);
    if (this.offered.has(key)) throw new KernelError('CONFLICT', `plugin '${plugin}' provided the ${kind} '${name}' twice`, { details: { plugin, kind, name } });
    const scope: RunningAction = {
      plugin, tool: kind, action: name, declaredEffects: [...declared], label: `${kind} ${plugin}/${name}`,
      onRefused: (_kind, target) => log.warn('egress refused', { kind, backend: name, target }),
    };
    const effects = effectiveEffects(declared, source, trusted);
    const metered = effects.includes('externalCost')
      ? (texts: readonly string[], who: UsageCaller | undefined) => this.meter?.({ kind, plugin, name, model: String((raw as { model?: unknown }).model ?? name), texts, ...who })
      : undefined;
    const entry: Registered<K> = { kind, plugin, name, effects, backend: scoped(raw, scope, metered) };
    this.offered.set(key, entry as Registered<BackendKind>);
    this.changed();
    return () => {
      if (this.offered.get(key) !== (entry as Registered<BackendKind>)) return;
      this.offered.delete(key);
      this.changed();
    };
  }

  /**
   * Records that a plugin cannot offer a backend it lists, and why: a selection naming it says so (it said
   * "which no active plugin offers", and the reason was a log line). `field` points to the cause.
   */
  decline(kind: BackendKind, plugin: string, name: string, message: string, field: string | undefined): () => void {
    const key = keyOf(kind, plugin, name);
    const entry: Declined = { kind, plugin, name, message, ...(field !== undefined ? { field } : {}) };
    this.declined.set(key, entry);
    return () => {
      if (this.declined.get(key) === entry) this.declined.delete(key);
    };
  }

  private readonly listeners = new Set<() => void>();

  /**
   * Called when a backend comes or goes (its plugin enabled or disabled while serving): the actions that
   * need one become available or not, though no action was added or removed (MCP's tools/list_changed).
   */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }

  /**
   * Records which backend of a kind the kernel uses. A second plugin may name the same one; naming
   * another is a configuration error that names both fields.
   */
  select<K extends BackendKind>(kind: K, ref: string, field: string, plugin: string): BackendHandle<K> {
    if (!/^[a-z][a-z0-9]*(-[a-z0-9]+)*(\/[a-z][a-z0-9-]*)?$/.test(ref)) {
      throw new KernelError('CONFIG_INVALID', `${field}: '${ref}' is not '<plugin id>' or '<plugin id>/<${kind} name>'`, { details: { field, ref } });
    }
    const earlier = this.selections.get(kind);
    if (earlier && earlier.ref !== ref) {
      throw new KernelError('CONFIG_INVALID', `${field} names the ${kind} '${ref}' but ${earlier.field} already names '${earlier.ref}'; the kernel uses one ${kind}`, { details: { field, ref, other: earlier.field } });
    }
    if (!earlier) this.selections.set(kind, { ref, field, plugin });
    return {
      kind, ref,
      current: (caller) => this.resolveFor(kind, ref, caller).backend,
      unavailable: (caller) => this.resolveFor(kind, ref, caller).reason,
    };
  }

  /** The backend in use for a kind, if one is selected and active. */
  selected<K extends BackendKind>(kind: K): SelectedBackend<K> | undefined {
    const selection = this.selections.get(kind);
    return selection ? this.resolve(kind, selection.ref).backend : undefined;
  }

  /** Why no backend of this kind can be used now: none is selected, or the selection names none that is active. */
  whyUnavailable(kind: BackendKind): string | undefined {
    const selection = this.selections.get(kind);
    return selection ? this.resolve(kind, selection.ref).reason : `no ${kind} is selected`;
  }

  /**
   * Selections that name no active backend (a misspelt plugin id, a plugin disabled, a backend its plugin
   * declined): the field and why; for a declined one, the field that caused it.
   */
  selectionProblems(): { field: string; message: string }[] {
    return [...this.selections].flatMap(([kind, selection]) => {
      const { reason, cause } = this.resolve(kind, selection.ref);
      return reason === undefined ? [] : [{ field: cause ?? selection.field, message: reason }];
    });
  }

  /** Effects the selected backends of these kinds add to an action that uses them. */
  effectsOf(kinds: readonly BackendKind[]): Effect[] {
    const effects = new Set<Effect>();
    for (const kind of kinds) for (const effect of this.selected(kind)?.effects ?? []) effects.add(effect);
    return [...effects];
  }

  /** Every backend offered, for listings. */
  list(): { kind: BackendKind; plugin: string; name: string; effects: readonly Effect[]; selected: boolean }[] {
    return [...this.offered.values()].map((entry) => ({
      kind: entry.kind, plugin: entry.plugin, name: entry.name, effects: entry.effects,
      selected: this.selected(entry.kind) === entry,
    }));
  }

  /**
   * The one place that answers whether a caller may use a backend: a reader's calls have no effects
   * (the role check), so a backend that sends data away or costs money is not theirs to use.
   */
  private resolveFor<K extends BackendKind>(kind: K, ref: string, caller: BackendCaller | undefined): { backend?: SelectedBackend<K>; reason?: string } {
    const found = this.resolve(kind, ref);
    if (found.backend && caller?.principal.sessionId !== undefined) {
      // The usage of a call an agent's turn made is the session's and the turn's (the ledger's feed reads this).
      const who = { sessionId: caller.principal.sessionId, ...(caller.principal.turnId !== undefined ? { turnId: caller.principal.turnId } : {}) };
      return { backend: { ...found.backend, backend: asCaller(found.backend.backend, who) } };
    }
    if (!found.backend || caller?.principal.role !== 'reader' || found.backend.effects.length === 0) return found;
    const { plugin, name, effects } = found.backend;
    return { reason: `a reader's call does not use the ${kind} ${plugin}/${name}, which has effects (${effects.join(', ')}); a local ${kind} serves readers too` };
  }

  /** `cause`: the field behind a declined backend, when its plugin named one. */
  private resolve<K extends BackendKind>(kind: K, ref: string): { backend?: SelectedBackend<K>; reason?: string; cause?: string } {
    const [plugin, name] = ref.split('/') as [string, string | undefined];
    const matches = (entry: { kind: BackendKind; plugin: string; name: string }): boolean => entry.kind === kind && entry.plugin === plugin && (name === undefined || entry.name === name);
    const candidates = [...this.offered.values()].filter(matches);
    if (candidates.length === 1) return { backend: candidates[0] as unknown as SelectedBackend<K> };
    const field = this.selections.get(kind)?.field ?? kind;
    const declined = candidates.length === 0 ? [...this.declined.values()].filter(matches) : [];
    if (declined.length > 0) {
      return { reason: `${field} names the ${kind} '${ref}', which cannot be used: ${declined.map((entry) => entry.message).join('; ')}`, ...(declined[0]!.field !== undefined ? { cause: declined[0]!.field } : {}) };
    }
    if (candidates.length === 0) {
      const others = [...this.offered.values()].filter((entry) => entry.kind === kind).map((entry) => `${entry.plugin}/${entry.name}`);
      return { reason: `${field} names the ${kind} '${ref}', which no active plugin offers${others.length ? ` (offered: ${others.join(', ')})` : ''}` };
    }
    return { reason: `${field}: plugin '${plugin}' offers ${candidates.length} ${kind}s (${candidates.map((entry) => entry.name).join(', ')}); name one as '${plugin}/<name>'` };
  }
}

interface Declined {
  kind: BackendKind;
  plugin: string;
  name: string;
  message: string;
  field?: string;
}

function keyOf(kind: BackendKind, plugin: string, name: string): string {
  return `${kind}\u0000${plugin}\u0000${name}`;
}

/**
 * Wraps every method so that it runs as the backend itself: egress is allowed only if its manifest entry
 * declares `dataEgress`, whoever calls it (an action, or the kernel's background indexer).
 */
/** Whose turn a backend call is made for, while it runs (set by asCaller). */
const usageCaller = new AsyncLocalStorage<UsageCaller>();
interface UsageCaller { sessionId?: string; turnId?: string }

/** The backend with every call run as made for this session and turn. */
function asCaller<T extends object>(backend: T, who: UsageCaller): T {
  return new Proxy(backend, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => usageCaller.run(who, () => (value as (...a: unknown[]) => unknown).apply(target, args));
    },
  });
}

function scoped<T extends object>(raw: T, scope: RunningAction, metered?: (texts: readonly string[], who: UsageCaller | undefined) => void): T {
  return new Proxy(raw, {
    get(target, property) {
      // The target as receiver: getters and private fields of the backend's class see the object itself.
      const value: unknown = Reflect.get(target, property);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const result = runInActionScope(scope, () => (value as (...a: unknown[]) => unknown).apply(target, args));
        const texts = metered ? textsOf(property, args) : undefined;
        if (!texts || !(result instanceof Promise)) return result;
        const who = usageCaller.getStore();
        return result.then((answer) => { metered!(texts, who); return answer; });
      };
    },
  });
}

/** What a call sends to be counted: an embedder's texts or query, a reranker's query and documents. */
function textsOf(property: string | symbol, args: unknown[]): readonly string[] | undefined {
  if (property === 'embed' && Array.isArray(args[0])) return args[0] as string[];
  if (property === 'embedQuery' && typeof args[0] === 'string') return [args[0]];
  if (property === 'rerank' && typeof args[0] === 'string' && Array.isArray(args[1])) return [args[0], ...(args[1] as string[])];
  return undefined;
}

/** A call to a billed backend, for the usage ledger (the texts are counted there, then dropped). */
export interface BackendUse {
  kind: BackendKind;
  plugin: string;
  name: string;
  model: string;
  texts: readonly string[];
  /** The agent's session and turn the call was made for; absent for background work (the indexer). */
  sessionId?: string;
  turnId?: string;
}

export type BackendMeter = (use: BackendUse) => void;
