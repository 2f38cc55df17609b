import { describe, expect, it } from 'vitest';
import { orderByDependencies, type DependencyNode } from '../../../core/plugins/dependency-order.js';
import { caught } from '../../helpers/harness.js';

const core = new Set(['core.workspace']);
const node = (id: string, requires: string[] = [], provides: string[] = []): DependencyNode => ({ id, requires, provides });

describe('dependency order', () => {
  it('puts every plugin after the providers of what it requires', () => {
    const order = orderByDependencies([
      node('search', ['blocks.store', 'core.workspace']),
      node('agent', ['search.index', 'blocks.store']),
      node('blocks', ['core.workspace'], ['blocks.store']),
      node('index', ['blocks.store'], ['search.index']),
    ], { available: core });
    expect(order.indexOf('blocks')).toBeLessThan(order.indexOf('search'));
    expect(order.indexOf('blocks')).toBeLessThan(order.indexOf('index'));
    expect(order.indexOf('index')).toBeLessThan(order.indexOf('agent'));
  });

  it('gives the same order whatever order the plugins were found in', () => {
    const nodes = [node('c'), node('a'), node('b', [], ['b.x']), node('d', ['b.x'])];
    const once = orderByDependencies(nodes, { available: core });
    expect(orderByDependencies([...nodes].reverse(), { available: core })).toEqual(once);
    expect(once).toEqual(['a', 'b', 'c', 'd']);
  });

  it('lets a plugin require what it provides itself', () => {
    expect(orderByDependencies([node('a', ['a.x'], ['a.x'])], { available: core })).toEqual(['a']);
  });

  it('names every plugin with a missing requirement at once', async () => {
    const error = await caught(() => orderByDependencies([node('a', ['x.one']), node('b', ['y.two'])], { available: core }));
    expect(error.code).toBe('PLUGIN_DEPENDENCY_MISSING');
    expect(error.message).toContain("plugin 'a' requires 'x.one'");
    expect(error.message).toContain("plugin 'b' requires 'y.two'");
  });

  it('names the plugins of a cycle in order, including longer cycles', async () => {
    const error = await caught(() => orderByDependencies([
      node('a', ['c.x'], ['a.x']), node('b', ['a.x'], ['b.x']), node('c', ['b.x'], ['c.x']), node('free'),
    ], { available: core }));
    expect(error.code).toBe('PLUGIN_DEPENDENCY_CYCLE');
    expect(error.details?.cycle).toEqual(['a', 'c', 'b', 'a']);
  });

  it('refuses two plugins providing the same capability', async () => {
    const error = await caught(() => orderByDependencies([node('a', [], ['s.x']), node('b', [], ['s.x'])], { available: core }));
    expect(error.code).toBe('PLUGIN_PROVIDES_CONFLICT');
    expect(error.details?.plugins).toEqual(['a', 'b']);
  });
});
