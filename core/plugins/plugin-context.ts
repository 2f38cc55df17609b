import type { DependencyContainer } from '../di.js';
import { CapabilityError } from '../errors.js';
import type { Logger } from '../log.js';
import type { PluginContext, PluginManifest, PluginSource } from '../plugin-api.js';
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
}

/** A plugin's view of the kernel: only what its manifest declares, nothing else. */
export function createPluginContext(parts: PluginContextParts): PluginContext {
  const { manifest, container } = parts;
  const requires = new Set(manifest.requires ?? []);
  const provides = new Set(manifest.provides ?? []);
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
    onDispose(fn: Disposer): void {
      parts.addDisposer(fn);
    },
  };
}

function toToken<T>(tokenOrName: Token<T> | string): Token<T> {
  return typeof tokenOrName === 'string' ? createToken<T>(tokenOrName) : tokenOrName;
}
