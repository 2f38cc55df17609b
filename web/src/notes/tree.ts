import type { VNode } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { QuireClient } from '../../../core/client/quire-client.js';
import { describe, useLoad } from '../api.js';
import { html } from '../html.js';

interface Doc { id: string; title: string; childDocuments: number }
interface Notebook { id: string; name: string; documents?: number }

/** How many entries of one level are drawn at first; more on request (10,000 documents stay quick). */
const PAGE = 200;

/**
 * The notebooks and their documents, loaded a level at a time when opened. Keyboard: the entries are
 * buttons and links in order, so Tab walks them and Enter opens.
 */
export function Tree({ client, current, refresh }: { client: QuireClient; current: string | undefined; refresh: number }): VNode {
  const [notebooks, error] = useLoad(() => client.call('notebook_list', { body: {} }).then((answer): Notebook[] => answer.result.notebooks), [client, refresh]);
  if (error) return html`<p class="error" role="alert">${error}</p>`;
  if (!notebooks) return html`<p class="muted">Loading…</p>`;
  if (notebooks.length === 0) return html`<p class="muted">No notebooks yet.</p>`;
  return html`<nav aria-label="Notebooks" class="tree"><ul>${notebooks.map((notebook) => html`<li key=${notebook.id}>
    <${Branch} client=${client} notebook=${notebook.id} label=${notebook.name} current=${current} refresh=${refresh} open=${notebooks.length === 1} />
  </li>`)}</ul></nav>`;
}

function Branch({ client, notebook, parentId, label, href, current, refresh, open: initiallyOpen, count }: {
  client: QuireClient; notebook: string; parentId?: string; label: string; href?: string; current: string | undefined; refresh: number; open?: boolean; count?: number;
}): VNode {
  const [open, setOpen] = useState(initiallyOpen === true);
  const [docs, setDocs] = useState<Doc[] | undefined>();
  const [shown, setShown] = useState(PAGE);
  const [error, setError] = useState<string>();
  useEffect(() => {
    if (!open) return;
    client.call('document_list', { body: { notebook, ...(parentId ? { parentId } : {}) } })
      .then((answer) => setDocs(answer.result.documents as Doc[]), (e: unknown) => setError(describe(e)));
  }, [open, client, notebook, parentId, refresh]);
  const hasChildren = count === undefined || count > 0;
  return html`<div class="branch">
    <span class=${`entry${current !== undefined && current === parentId ? ' current' : ''}`}>
      ${hasChildren ? html`<button type="button" class="twisty" aria-expanded=${open} aria-label=${`${open ? 'Close' : 'Open'} ${label}`} onClick=${() => setOpen(!open)}>${open ? '▾' : '▸'}</button>` : html`<span class="twisty" aria-hidden="true"></span>`}
      ${href ? html`<a href=${href} aria-current=${current === parentId ? 'page' : undefined}>${label}</a>` : html`<strong>${label}</strong>`}
    </span>
    ${open ? html`<ul>
      ${error ? html`<li class="error">${error}</li>` : null}
      ${docs === undefined && !error ? html`<li class="muted">Loading…</li>` : null}
      ${(docs ?? []).slice(0, shown).map((doc) => html`<li key=${doc.id}>
        <${Branch} client=${client} notebook=${notebook} parentId=${doc.id} label=${doc.title} href=${`#/doc/${doc.id}`} current=${current} refresh=${refresh} count=${doc.childDocuments} />
      </li>`)}
      ${docs && docs.length > shown ? html`<li><button type="button" class="more" onClick=${() => setShown(shown + PAGE * 5)}>Show more (${docs.length - shown} left)</button></li>` : null}
    </ul>` : null}
  </div>`;
}
