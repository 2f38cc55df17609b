import { KernelError } from '../errors.js';

export interface DependencyNode {
  id: string;
  requires: readonly string[];
  provides: readonly string[];
}

export interface OrderOptions {
  /** Capabilities the kernel itself provides (`core.*`). */
  available: ReadonlySet<string>;
  /** Capabilities provided by plugins that are disabled, to say so in the error. */
  disabledProviders?: ReadonlyMap<string, string>;
}

/**
 * Orders plugins so that each comes after the plugins providing what it requires. A missing capability
 * or a cycle stops the boot with an error naming the plugins involved. Ties keep id order, so the
 * order is the same on every boot.
 */
export function orderByDependencies(nodes: readonly DependencyNode[], options: OrderOptions): string[] {
  const providerOf = mapProviders(nodes);
  const edges = new Map<string, string[]>();
  const missing: string[] = [];
  for (const node of nodes) {
    const dependsOn: string[] = [];
    for (const capability of node.requires) {
      if (options.available.has(capability)) continue;
      const provider = providerOf.get(capability);
      if (provider !== undefined) {
        if (provider !== node.id) dependsOn.push(provider);
        continue;
      }
      const disabled = options.disabledProviders?.get(capability);
      missing.push(disabled
        ? `plugin '${node.id}' requires '${capability}', provided by '${disabled}', which is disabled`
        : `plugin '${node.id}' requires '${capability}', which no enabled plugin provides`);
    }
    edges.set(node.id, dependsOn);
  }
  if (missing.length > 0) {
    throw new KernelError('PLUGIN_DEPENDENCY_MISSING', missing.join('; '), { details: { problems: missing } });
  }
  return topologicalOrder([...edges.keys()].sort(), edges);
}

function mapProviders(nodes: readonly DependencyNode[]): Map<string, string> {
  const providerOf = new Map<string, string>();
  for (const node of nodes) {
    for (const capability of node.provides) {
      const other = providerOf.get(capability);
      if (other !== undefined) {
        throw new KernelError('PLUGIN_PROVIDES_CONFLICT', `plugins '${other}' and '${node.id}' both provide '${capability}'`, {
          details: { capability, plugins: [other, node.id] },
        });
      }
      providerOf.set(capability, node.id);
    }
  }
  return providerOf;
}

function topologicalOrder(ids: readonly string[], edges: ReadonlyMap<string, readonly string[]>): string[] {
  const order: string[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (id: string, path: string[]): void => {
    const seen = state.get(id);
    if (seen === 'done') return;
    if (seen === 'visiting') {
      const cycle = [...path.slice(path.indexOf(id)), id];
      throw new KernelError('PLUGIN_DEPENDENCY_CYCLE', `plugins depend on each other in a cycle: ${cycle.join(' → ')}`, {
        details: { cycle },
      });
    }
    state.set(id, 'visiting');
    for (const dependency of [...(edges.get(id) ?? [])].sort()) visit(dependency, [...path, id]);
    state.set(id, 'done');
    order.push(id);
  };
  for (const id of ids) visit(id, []);
  return order;
}
