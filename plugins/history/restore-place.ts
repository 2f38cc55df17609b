import { KernelError } from '../../core/index.js';
import { titleOf, type Version } from './history-store.js';

export interface Place {
  notebook: string;
  /** data/-relative path of the document file: `<notebook>/<parent ids…>/<id>.json`. */
  path: string;
  hpath: string;
}

/**
 * Where a rollback writes a document: where it is now; for a removed one, the notebook the caller
 * names (at its top), else where it was, under its parent document wherever that is now. Written at
 * its old path under a parent removed or moved since, the file was in no document's folder: the answer
 * said restored and the document could be neither found nor read.
 */
export function restorePlace(found: Version, now: Place | undefined, asked: string | undefined, placeOf: (id: string) => Place | undefined): Place {
  const title = titleOf(found.text);
  if (now !== undefined) {
    if (asked !== undefined && asked !== now.notebook) {
      throw new KernelError('INVALID_INPUT', `document '${found.documentId}' is in notebook '${now.notebook}': it is restored where it is (notebook is for a removed document; document_move moves it)`, { details: { field: 'notebook', notebook: now.notebook } });
    }
    return now;
  }
  if (asked !== undefined) return { notebook: asked, path: `${asked}/${found.documentId}.json`, hpath: `/${title}` };
  const parts = found.path.split('/');
  if (parts.length <= 2) return { notebook: parts[0]!, path: found.path, hpath: found.hpath };
  const parentId = parts[parts.length - 2]!;
  const parent = placeOf(parentId);
  if (parent === undefined) {
    throw new KernelError('CONFLICT', `the document this one was under (${parentId}) is gone: restore that one first (its history keeps it), or give notebook to put this one at the top of a notebook`, { details: { parent: parentId } });
  }
  return { notebook: parent.notebook, path: `${parent.path.slice(0, -'.json'.length)}/${found.documentId}.json`, hpath: `${parent.hpath}/${title}` };
}
