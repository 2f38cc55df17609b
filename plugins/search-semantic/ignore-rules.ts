import { DEFAULT_MAX_CHARS, DEFAULT_MIN_CHARS, type IgnoreConfig } from './config.js';

/** Why a block is not embedded. `local-only`: its notebook's text must not reach the remote embedder in use. */
export type IgnoredReason = 'path' | 'type' | 'length' | 'local-only';

export const IGNORED_REASONS: readonly IgnoredReason[] = ['path', 'type', 'length', 'local-only'];

/** What the rules look at: a block's row in the blocks index. */
export interface BlockFacts {
  id: string;
  notebook: string;
  /** `<notebook>/<parent>/<document>.json`. */
  path: string;
  hpath: string;
  type: string;
  content: string;
}

export interface IgnoreRules {
  /** Why `block` is not embedded, or null. `localOnly`: its notebook is local-only and the embedder is remote. */
  reason(block: BlockFacts, localOnly: boolean): IgnoredReason | null;
}

export function ignoreRules(config: IgnoreConfig = {}): IgnoreRules {
  const idPaths = (config.paths ?? []).filter((path) => !path.startsWith('/')).map((path) => path.replace(/\.json$/, '').split('/').filter(Boolean));
  const titlePaths = (config.paths ?? []).filter((path) => path.startsWith('/')).map((path) => path.replace(/\/+$/, ''));
  const types = new Set(config.types ?? []);
  const min = config.minChars ?? DEFAULT_MIN_CHARS;
  const max = config.maxChars ?? DEFAULT_MAX_CHARS;
  const pathIgnored = (block: BlockFacts): boolean => {
    if (idPaths.length === 0 && titlePaths.length === 0) return false;
    const ids = block.path.replace(/\.json$/, '').split('/');
    for (const rule of idPaths) {
      // One id: that notebook or document wherever it is; several: a path from the notebook down.
      if (rule.length === 1 ? ids.includes(rule[0]!) : rule.every((id, i) => ids[i] === id)) return true;
    }
    return titlePaths.some((rule) => block.hpath === rule || block.hpath.startsWith(`${rule}/`));
  };
  return {
    reason(block, localOnly) {
      if (pathIgnored(block)) return 'path';
      if (types.has(block.type)) return 'type';
      const chars = characters(block.content.trim(), max);
      if (chars < min || chars > max) return 'length';
      return localOnly ? 'local-only' : null;
    },
  };
}

/** Code points in `text`, counted no further than `cap + 1`. */
export function characters(text: string, cap = Number.MAX_SAFE_INTEGER): number {
  // Every code point is one or two UTF-16 units: the unit count bounds it from both sides.
  if (text.length <= cap) {
    let count = 0;
    for (let i = 0; i < text.length; i++) {
      const unit = text.charCodeAt(i);
      if (unit < 0xdc00 || unit > 0xdfff) count++;
    }
    return count;
  }
  if (text.length > 2 * (cap + 1)) return cap + 1;
  let count = 0;
  for (let i = 0; i < text.length && count <= cap; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0xdc00 || unit > 0xdfff) count++;
  }
  return count;
}
