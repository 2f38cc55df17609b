import type { VNode } from 'preact';

/** The nodes as a compact string: `<tag attr=value>children</tag>`, text as it is. */
export function show(nodes: unknown[]): string {
  return nodes.map((node) => {
    if (typeof node === 'string') return node;
    const vnode = node as VNode<Record<string, unknown>>;
    const { children, ...props } = vnode.props;
    const attrs = Object.entries(props).filter(([, value]) => value !== undefined && value !== null).map(([key, value]) => ` ${key}=${String(value)}`).join('');
    const inner = children === undefined ? [] : Array.isArray(children) ? children : [children];
    return `<${String(vnode.type)}${attrs}>${show(inner)}</${String(vnode.type)}>`;
  }).join('');
}
