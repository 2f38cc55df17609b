import { localOnlyAmong } from '../../core/index.js';
import type { BlocksIndex } from '../blocks/tokens.js';

/**
 * The notebooks marked `egress: local-only` in their `.notebook.json`: their text never goes to a
 * backend that declares dataEgress. Core answers which (core/gate/egress-scope.ts), from the notebooks
 * as the blocks index gives them.
 */
export function localOnlyNotebooks(index: BlocksIndex): Set<string> {
  return localOnlyAmong(index.notebooks());
}
