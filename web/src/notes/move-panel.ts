import type { VNode } from 'preact';
import { useState } from 'preact/hooks';
import type { QuireClient } from '../../../core/client/quire-client.js';
import { describe, QuireApiError, useLoad } from '../api.js';
import { html } from '../html.js';

/** Documents offered as a new place, at most: a notebook larger than this offers its first ones, said. */
const PLACES_LISTED = 500;

interface Place { id: string; label: string }

/**
 * Moving a document (with those below it) to another notebook, or under another document: the page
 * had no way to (only the API and the CLI). Checked against the document as shown (`updated`).
 */
export function MovePanel({ client, id, notebook, parentId, updated, onMoved }: {
  client: QuireClient; id: string; notebook: string; parentId: string | null; updated: string | undefined; onMoved: () => void;
}): VNode {
  const [notebooks, notebooksError] = useLoad(() => client.call('notebook_list', { body: {} }).then((answer) => (answer.result as { notebooks: { id: string; name: string }[] }).notebooks), []);
  const [target, setTarget] = useState(notebook);
  const [parent, setParent] = useState(parentId ?? '');
  const [places, placesError] = useLoad(() => placesIn(client, target, id), [target]);
  const [note, setNote] = useState<string>();
  const move = async (event: Event): Promise<void> => {
    event.preventDefault();
    try {
      await client.call('document_move', { body: { id, notebook: target, ...(parent ? { parentId: parent } : {}), ...(updated ? { expectedUpdated: updated } : {}) } });
      setNote('Moved.');
      onMoved();
    } catch (e) {
      setNote(e instanceof QuireApiError && e.status === 409 && e.code === 'CONFLICT' ? `Not moved: ${e.message}` : describe(e));
    }
  };
  if (!notebooks || !places) return html`<p class="muted">${notebooksError ?? placesError ?? 'Loading the places it can go…'}</p>`;
  return html`<form class="move" aria-label="Move this document" onSubmit=${move}>
    <label for="move-notebook">Move to notebook</label>
    <select id="move-notebook" value=${target} onChange=${(event: Event) => { setTarget((event.target as HTMLSelectElement).value); setParent(''); }}>
      ${notebooks.map((each) => html`<option key=${each.id} value=${each.id}>${each.name}</option>`)}
    </select>
    <label for="move-parent">Move under</label>
    <select id="move-parent" value=${parent} onChange=${(event: Event) => setParent((event.target as HTMLSelectElement).value)}>
      <option value="">(the top of the notebook)</option>
      ${places.list.map((place) => html`<option key=${place.id} value=${place.id}>${place.label}</option>`)}
    </select>
    ${places.more ? html`<p class="muted">Only the first ${PLACES_LISTED} documents are offered; move it in steps, or with quire or the API.</p>` : null}
    <button type="submit">Move here</button>
    ${note ? html`<p class="notice" role="status">${note}</p>` : null}
  </form>`;
}

/** The documents of a notebook as places, outline order, indented by depth; never the moved one nor those below it. */
async function placesIn(client: QuireClient, notebook: string, moved: string): Promise<{ list: Place[]; more: boolean }> {
  const list: Place[] = [];
  const visit = async (parentId: string | undefined, depth: number): Promise<boolean> => {
    const answer = await client.call('document_list', { body: { notebook, ...(parentId ? { parentId } : {}) } });
    for (const doc of (answer.result as { documents: { id: string; title: string; childDocuments: number }[] }).documents) {
      if (doc.id === moved) continue;
      if (list.length >= PLACES_LISTED) return true;
      list.push({ id: doc.id, label: `${'\u00a0\u00a0'.repeat(depth)}${doc.title || 'Untitled'}` });
      if (doc.childDocuments > 0 && await visit(doc.id, depth + 1)) return true;
    }
    return false;
  };
  return { list, more: await visit(undefined, 0) };
}
