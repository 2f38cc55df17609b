import type { BlocksIndex } from '../blocks/tokens.js';

/**
 * The notebooks marked `egress: local-only` in their `.notebook.json`: their text never goes to a
 * backend that declares dataEgress. Read from the entry as the blocks index gives it, so that a blocks
 * index without the field (an older one) marks none.
 */
export function localOnlyNotebooks(index: BlocksIndex): Set<string> {
  const out = new Set<string>();
  for (const [id, notebook] of index.notebooks()) if ('egress' in notebook && notebook.egress === 'local-only') out.add(id);
  return out;
}
