import type { DependencyContainer } from '../di.js';
import { CapabilityError } from '../errors.js';
import type { Logger } from '../log.js';
import type { PluginContext, PluginManifest, PluginSource } from '../plugin-api.js';
import type { BackendRegistry } from '../backends/backend-registry.js';
import { createToken, tokenName, type Token } from '../tokens.js';

export type Disposer = () => void | Promise<void>;

export interface PluginContextParts {
  manifest: PluginManifest;
  source: PluginSource;
  config: Record<string, unknown>;
  log: Logger;
  container: DependencyContainer;
  /** The core tokens plugins may require at all. */
  visibleCoreTokens: ReadonlySet<symbol>;
  addDisposer(fn: Disposer): void;
  provided: Set<string>;
  /** Whether the person marked this (user) plugin trusted: its backends' declared effects are then believed. */
  trusted: boolean;
  backends: BackendRegistry;
}

/** A plugin's view of the kernel: only what its manifest declares, nothing else. */
export function createPluginContext(parts: PluginContextParts): PluginContext {
  const { manifest, container } = parts;
  const requires = new Set(manifest.requires ?? []);
  const provides = new Set(manifest.provides ?? []);
  const uses = new Set(manifest.uses ?? []);
  return {
    id: manifest.id,
    config: parts.config,
    log: parts.log,
    get<T>(tokenOrName: Token<T> | string): T {
      const token = toToken(tokenOrName);
      const name = tokenName(token);
      if (!requires.has(name)) {
        throw new CapabilityError(`plugin '${manifest.id}' asked for '${name}' but its manifest does not list it in 'requires'`, { details: { plugin: manifest.id, capability: name } });
      }
      if (name.startsWith('core.') && !parts.visibleCoreTokens.has(token)) {
        throw new CapabilityError(`'${name}' is internal to the kernel and not available to plugins`, { details: { plugin: manifest.id, capability: name } });
      }
      if (!container.isRegistered(token, true)) {
        throw new CapabilityError(`'${name}' is not provided by any active plugin`, { details: { plugin: manifest.id, capability: name } });
      }
      return container.resolve<T>(token);
    },
    provide<T>(tokenOrName: Token<T> | string, value: T): void {
      const token = toToken(tokenOrName);
      const name = tokenName(token);
      if (!provides.has(name)) {
        throw new CapabilityError(`plugin '${manifest.id}' tried to provide '${name}' but its manifest does not list it in 'provides'`, { details: { plugin: manifest.id, capability: name } });
      }
      // gate.* and agent.* capabilities steer the gate and the turn (snapshots); only the kernel's own plugins may offer them.
      if ((name.startsWith('gate.') || name.startsWith('agent.')) && parts.source !== 'native') {
        throw new CapabilityError(`'${name}' can only be provided by a native plugin, not by ${parts.source} plugin '${manifest.id}'`, { details: { plugin: manifest.id, capability: name } });
      }
      container.registerInstance<T>(token, value);
      parts.provided.add(name);
    },
    find<T>(tokenOrName: Token<T> | string): T | undefined {
      const token = toToken(tokenOrName);
      const name = tokenName(token);
      if (!uses.has(name) && !requires.has(name)) {
        throw new CapabilityError(`plugin '${manifest.id}' asked for '${name}' but its manifest lists it in neither 'uses' nor 'requires'`, { details: { plugin: manifest.id, capability: name } });
      }
      if (name.startsWith('core.') && !parts.visibleCoreTokens.has(token)) {
        throw new CapabilityError(`'${name}' is internal to the kernel and not available to plugins`, { details: { plugin: manifest.id, capability: name } });
      }
      return container.isRegistered(token, true) ? container.resolve<T>(token) : undefined;
    },
    provideBackend(kind, name, backend): void {
      const listed = (kind === 'embedder' ? manifest.embedders : manifest.rerankers)?.find((entry) => entry.name === name);
      if (!listed) {
        throw new CapabilityError(`plugin '${manifest.id}' tried to provide the ${kind} '${name}' but its manifest does not list it in '${kind}s'`, { details: { plugin: manifest.id, kind, name } });
      }
      // Disposers run last-first: the backend leaves the registry before it is released.
      if (backend.dispose) parts.addDisposer(() => backend.dispose!());
      parts.addDisposer(parts.backends.provide(kind, manifest.id, name, backend, listed.effects, parts.source, parts.trusted, parts.log));
    },
    declineBackend(kind, name, reason): void {
      const listed = (kind === 'embedder' ? manifest.embedders : manifest.rerankers)?.find((entry) => entry.name === name);
      if (!listed) {
        throw new CapabilityError(`plugin '${manifest.id}' declined the ${kind} '${name}' but its manifest does not list it in '${kind}s'`, { details: { plugin: manifest.id, kind, name } });
      }
      parts.addDisposer(parts.backends.decline(kind, manifest.id, name, reason.message, reason.field));
    },
    selectBackend(kind, ref, field) {
      return parts.backends.select(kind, ref, field, manifest.id);
    },
    onDispose(fn: Disposer): void {
      parts.addDisposer(fn);
    },
  };
}

function toToken<T>(tokenOrName: Token<T> | string): Token<T> {
  return typeof tokenOrName === 'string' ? createToken<T>(tokenOrName) : tokenOrName;
}
