import type { VNode } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { QuireClient } from '../../core/client/quire-client.js';
import { describe } from './api.js';
import { html } from './html.js';

interface Hit { id: string; documentId: string; hpath?: string; type: string; snippet: string }
/** `total` is absent from a semantic answer (the index ranks the nearest, it does not count them). */
interface Answer { total?: number; totalIsLowerBound?: boolean; page: number; pageSize: number; results: Hit[]; note?: string }
/**
 * How many of each arm's hits a hybrid search fuses, the same for every page of a query so that the
 * pages are one ranking (at the kernel's default of 50, about five pages of 20 could be reached).
 */
const HYBRID_DEPTH = 200;
/** How many results semantic search ranks at most (its page and pageSize bounds). */
const SEMANTIC_RANKED = 1_000;
type Mode = 'fulltext' | 'hybrid' | 'semantic';
/** A search as asked: kept in the address, so that Back from a result comes to the same page of it. */
interface Asked { q: string; mode: Mode; type: string; notebook: string }

function fromAddress(address: string): Asked & { page: number } {
  const params = new URLSearchParams(address);
  const how = params.get('how');
  const page = Number(params.get('page'));
  return {
    q: params.get('q') ?? '', mode: how === 'hybrid' || how === 'semantic' ? how : 'fulltext', type: params.get('type') ?? '', notebook: params.get('notebook') ?? '',
    page: Number.isInteger(page) && page >= 1 ? page : 1,
  };
}

function toAddress(asked: Asked, page: number): string {
  const params = new URLSearchParams({ q: asked.q });
  if (asked.mode !== 'fulltext') params.set('how', asked.mode);
  if (asked.type) params.set('type', asked.type);
  if (asked.notebook) params.set('notebook', asked.notebook);
  if (page > 1) params.set('page', String(page));
  return `#/search?${params.toString()}`;
}

/**
 * One search box: full text, and semantic or hybrid when those arms are on (the plugin list says
 * whether they can run). Snippets come back HTML-escaped with the matches in <mark>: they are split on
 * those two tags only and shown as text, so no other markup can get through.
 */
export function SearchPage({ client, address }: { client: QuireClient; address: string }): VNode {
  const start = fromAddress(address);
  const [query, setQuery] = useState(start.q);
  const [mode, setMode] = useState<Mode>(start.mode);
  const [type, setType] = useState(start.type);
  const [page, setPage] = useState(1);
  const [answer, setAnswer] = useState<Answer>();
  const [error, setError] = useState<string>();
  const [modes, setModes] = useState<Mode[]>(['fulltext']);
  const [notebook, setNotebook] = useState(start.notebook);
  const [notebooks, setNotebooks] = useState<{ id: string; name: string }[]>([]);
  useEffect(() => { client.call('notebook_list', { body: {} }).then((answer) => setNotebooks(answer.result.notebooks), () => undefined); }, [client]);
  useEffect(() => {
    client.call('listPlugins').then((listing) => {
      const available = new Set<Mode>(['fulltext']);
      for (const plugin of listing.plugins) for (const tool of plugin.tools ?? []) for (const action of tool.actions) {
        if (!action.unavailable && (action.wireName === 'search_semantic' || action.wireName === 'search_hybrid')) available.add(action.wireName.slice('search_'.length) as Mode);
      }
      setModes([...available]);
      availableNow.current = available;
      // A way of searching the address names that is not on (an old link, an arm turned off since):
      // full text, and the search asked with it again (the menu showed nothing, and Search failed again).
      const asked = lastAsked.current;
      if (!available.has(modeNow.current)) setMode('fulltext');
      if (asked && !available.has(asked.mode)) void run(asked.page, { ...asked, mode: 'fulltext' });
    }, () => undefined);
  }, [client]);
  const availableNow = useRef<Set<Mode>>();
  const modeNow = useRef(mode);
  modeNow.current = mode;
  const lastAsked = useRef<Asked & { page: number }>();
  // Only the newest search's answer is shown: an older one answering last must not replace it (nor its query in the address).
  const latest = useRef(0);
  const mounted = useRef(true);
  useEffect(() => () => { mounted.current = false; }, []);
  // The search whose results are shown: the pager goes on with it, not with filters changed and not submitted.
  const shown = useRef<Asked>();
  const run = async (target: number, asked: Asked = { q: query, mode, type, notebook }): Promise<void> => {
    if (asked.q.trim() === '') return;
    lastAsked.current = { ...asked, page: target };
    const number = ++latest.current;
    setError(undefined);
    try {
      const input = { query: asked.q, page: target, pageSize: 20, ...(asked.mode === 'hybrid' ? { depth: HYBRID_DEPTH } : {}), ...(asked.type ? { types: [asked.type] } : {}), ...(asked.notebook ? { notebooks: [asked.notebook] } : {}) };
      const result = await client.action(`search_${asked.mode}` as 'search_fulltext', input as never) as Answer;
      // A search answering after the person left the page must not write its address over the page they went to.
      if (number !== latest.current || !mounted.current) return;
      shown.current = asked;
      setAnswer(result);
      setPage(target);
      history.replaceState(null, '', toAddress(asked, target));
    } catch (e) {
      if (number !== latest.current || !mounted.current) return;
      // The results of the search before are not this one's: they went, and the error says why.
      shown.current = undefined;
      setAnswer(undefined);
      setError(describe(e));
    }
  };
  // A new address (a tag clicked while here, Back from a result): its search, not the one in the form. Not
  // at the first render: the form starts with it already, and setting it again after the paint wiped
  // what was typed meanwhile.
  const shownFor = useRef<string>();
  useEffect(() => {
    const named = fromAddress(address);
    const asked = availableNow.current && !availableNow.current.has(named.mode) ? { ...named, mode: 'fulltext' as const } : named;
    if (shownFor.current !== undefined) {
      setQuery(asked.q);
      setMode(asked.mode);
      setType(asked.type);
      setNotebook(asked.notebook);
    }
    shownFor.current = address;
    if (asked.q) void run(asked.page, asked);
  }, [address]);
  // Without a total (semantic search), a full page offers the next one.
  const counted = answer?.total !== undefined;
  // (Semantic search ranks at most its first 1,000 results: no page past them is offered.)
  const pages = !answer ? 1 : answer.total !== undefined ? Math.max(1, Math.ceil(answer.total / answer.pageSize)) : answer.results.length === answer.pageSize && page * answer.pageSize < SEMANTIC_RANKED ? page + 1 : page;
  return html`<section class="search" aria-labelledby="search-title">
    <h1 id="search-title">Search</h1>
    <form role="search" onSubmit=${(event: Event) => { event.preventDefault(); void run(1); }}>
      <label class="sr-only" for="q">Search the notes</label>
      <input id="q" type="search" value=${query} placeholder="Words, a phrase in quotes, #tag#" onInput=${(event: Event) => setQuery((event.target as HTMLInputElement).value)} />
      <label>How <select value=${mode} onChange=${(event: Event) => setMode((event.target as HTMLSelectElement).value as Mode)}>
        ${modes.map((option) => html`<option value=${option}>${option === 'fulltext' ? 'Full text' : option === 'hybrid' ? 'Hybrid' : 'Semantic'}</option>`)}
      </select></label>
      ${notebooks.length > 1 ? html`<label>Notebook <select value=${notebook} onChange=${(event: Event) => setNotebook((event.target as HTMLSelectElement).value)}>
        <option value="">all</option>${notebooks.map((entry) => html`<option value=${entry.id}>${entry.name}</option>`)}
      </select></label>` : null}
      <label>Blocks <select value=${type} onChange=${(event: Event) => setType((event.target as HTMLSelectElement).value)}>
        <option value="">all</option><option value="paragraph">paragraphs</option><option value="heading">headings</option><option value="listItem">list items</option><option value="code">code</option>
      </select></label>
      <button type="submit">Search</button>
    </form>
    ${error ? html`<p class="error" role="alert">${error}</p>` : null}
    ${answer ? html`<p class="muted" aria-live="polite">${counted ? `${answer.total}${answer.totalIsLowerBound ? '+' : ''} result${answer.total === 1 ? '' : 's'}` : `${answer.results.length} result${answer.results.length === 1 ? '' : 's'} on this page, nearest first`}</p>
      ${answer.note ? html`<p class="muted note">${answer.note}</p>` : null}
      <ol class="hits">${answer.results.map((hit) => html`<li key=${hit.id}>
        <a href=${`#/doc/${hit.documentId}/${hit.id}`}><span class="muted">${hit.hpath ?? ''}</span><span class="snippet">${snippet(hit.snippet)}</span></a>
      </li>`)}</ol>
      ${pages > 1 ? html`<nav class="pager" aria-label="Pages">
        <button type="button" disabled=${page <= 1} onClick=${() => void run(page - 1, shown.current)}>Previous</button>
        <span>${counted ? `Page ${page} of ${pages}` : `Page ${page}`}</span>
        <button type="button" disabled=${page >= pages} onClick=${() => void run(page + 1, shown.current)}>Next</button>
      </nav>` : null}` : null}
  </section>`;
}

/** `a <mark>b</mark> &amp; c` as text and <mark> elements: the snippet's own escapes undone, nothing else read as markup. */
function snippet(text: string): (string | VNode)[] {
  const unescape = (part: string): string => part.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');
  return text.split(/(<mark>[\s\S]*?<\/mark>)/).map((part) => (part.startsWith('<mark>') ? html`<mark>${unescape(part.slice(6, -7))}</mark>` : unescape(part)));
}
