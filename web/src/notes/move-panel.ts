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
  // A notebook of more than PLACES_LISTED documents: the others are found by their title.
  const [finding, setFinding] = useState<{ query: string; target: string; found?: Place[]; error?: string }>();
  const [draft, setDraft] = useState('');
  const [note, setNote] = useState<string>();
  const find = async (query: string): Promise<void> => {
    // The place chosen may not be among what is found: a select showing none would still move it there.
    setParent('');
    setFinding({ query, target });
    const outcome = await placesFound(client, target, id, query).then((found) => ({ found }), (e: unknown) => ({ error: describe(e) }));
    // Only the latest search's answer is shown (an earlier, slower one came after it, or was of another notebook).
    setFinding((now) => (now?.query === query && now.target === target && now.found === undefined && now.error === undefined ? { query, target, ...outcome } : now));
  };
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
    <select id="move-notebook" value=${target} onChange=${(event: Event) => { setTarget((event.target as HTMLSelectElement).value); setParent(''); setFinding(undefined); setDraft(''); }}>
      ${notebooks.map((each) => html`<option key=${each.id} value=${each.id}>${each.name}</option>`)}
    </select>
    ${places.more ? html`<p class="muted">The first ${PLACES_LISTED} documents are offered; find the others by their title.</p>
      <label for="move-find">Find a document</label>
      <input id="move-find" type="search" maxlength="200" value=${draft} onInput=${(event: Event) => setDraft((event.target as HTMLInputElement).value)}
        onKeyDown=${(event: KeyboardEvent) => { if (event.key === 'Enter' && !event.isComposing && event.keyCode !== 229) { event.preventDefault(); void find(draft.trim()); } }} />
      <button type="button" onClick=${() => void find(draft.trim())}>Find</button>
      ${finding?.error ? html`<p class="error">${finding.error}</p>` : finding?.found?.length === 0 ? html`<p class="muted">No document of this notebook has that in its title.</p>` : null}` : null}
    <label for="move-parent">Move under</label>
    <select id="move-parent" value=${parent} onChange=${(event: Event) => setParent((event.target as HTMLSelectElement).value)}>
      <option value="">(the top of the notebook)</option>
      ${(finding?.query && finding.found ? finding.found : places.list).map((place) => html`<option key=${place.id} value=${place.id}>${place.label}</option>`)}
    </select>
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

/** Documents of a notebook whose title holds `query` (full-text search), never the moved one nor those below it. */
async function placesFound(client: QuireClient, notebook: string, moved: string, query: string): Promise<Place[] | undefined> {
  if (query === '') return undefined;
  type Hits = { results: { documentId: string; hpath?: string }[] };
  const search = async (path?: string): Promise<Hits> => (await client.call('search_fulltext', { body: { query, notebooks: [notebook], types: ['document'], pageSize: 100, ...(path ? { path } : {}) } })).result as Hits;
  const [found, below] = await Promise.all([search(), search(moved).catch(() => ({ results: [] }))]);
  const excluded = new Set([moved, ...below.results.map((hit) => hit.documentId)]);
  return found.results.filter((hit) => !excluded.has(hit.documentId)).map((hit) => ({ id: hit.documentId, label: hit.hpath ?? hit.documentId }));
}
