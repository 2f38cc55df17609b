import type { VNode } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { describe, forgetToken, QuireApiError, safeDecode, savedToken, signIn, type Session } from './api.js';
import { AgentPage, forgetComposed, unsentMessages } from './agent/agent-page.js';
import { forgetAssets } from './notes/assets.js';
import { html } from './html.js';
import { DocumentPage, forgetDrafts, unsavedNotes } from './notes/document-page.js';
import { Tree } from './notes/tree.js';
import { SearchPage } from './search-page.js';
import { SettingsPage } from './settings-page.js';

/** Where the app is: the hash (`#/doc/<id>/<block>`, `#/search?q=&how=&type=&notebook=&page=`, `#/agent/<id>`, `#/settings/<tab>`). */
interface Route { page: 'home' | 'doc' | 'block' | 'search' | 'agent' | 'settings'; id?: string; focus?: string; query?: string }

function route(): Route {
  const hash = location.hash.replace(/^#\/?/, '');
  const [path, search] = hash.split('?');
  const [page, id, focus] = (path ?? '').split('/').map(safeDecode);
  // The search's whole address (its words, how, filters, page): Back from a result comes to the same page of results.
  const query = search ?? '';
  switch (page) {
    case 'doc': return { page: 'doc', ...(id ? { id } : {}), ...(focus ? { focus } : {}) };
    case 'block': return { page: 'block', ...(id ? { id } : {}) };
    case 'search': return { page: 'search', query };
    case 'agent': return { page: 'agent', ...(id ? { id } : {}) };
    case 'settings': return { page: 'settings', id: id || 'plugins' };
    default: return { page: 'home' };
  }
}

export function App(): VNode {
  const [session, setSession] = useState<Session>();
  const [checking, setChecking] = useState(savedToken() !== undefined);
  const [error, setError] = useState<string>();
  const [where, setWhere] = useState(route());
  const [refresh, setRefresh] = useState(0);
  // The saved token is forgotten only when the kernel refuses it (401): an outage or a restart must not sign the person out.
  const resume = (): void => {
    const token = savedToken();
    if (!token) return;
    setChecking(true);
    setError(undefined);
    signIn(token).then(setSession, (e: unknown) => {
      if (e instanceof QuireApiError && e.status === 401) forgetToken();
      else setError(`Could not reach the kernel to sign in again: ${describe(e)}`);
    }).finally(() => setChecking(false));
  };
  useEffect(() => {
    const onHash = (): void => setWhere(route());
    addEventListener('hashchange', onHash);
    resume();
    return () => removeEventListener('hashchange', onHash);
  }, []);
  // An error belongs to the page it happened on (a reference that did not open): another page starts without it.
  useEffect(() => { if (session) setError(undefined); }, [where]);
  // A reference to a block opens its document there.
  useEffect(() => {
    if (!session || where.page !== 'block' || !where.id) return;
    session.client.call('block_get', { body: { id: where.id } }).then(
      (answer) => { location.replace(`#/doc/${(answer.result as { documentId: string }).documentId}/${where.id}`); },
      (e: unknown) => setError(describe(e)),
    );
  }, [session, where]);

  if (checking) return html`<p class="muted center">Signing in…</p>`;
  if (!session && error && savedToken()) return html`<p class="error center" role="alert">${error} <button type="button" onClick=${resume}>Try again</button></p>`;
  if (!session) return html`<${SignIn} onSignedIn=${setSession} />`;
  const isAdmin = session.role === 'admin';
  const signOut = (): void => {
    // What is typed and not saved is forgotten at sign-out (the next person must not find it): asked first, as leaving is.
    if ((unsavedNotes() || unsentMessages()) && !confirm('Text you typed in your notes or to the agent is not saved, and signing out forgets it. Sign out anyway?')) return;
    forgetToken(); forgetAssets(); forgetDrafts(); forgetComposed(); setSession(undefined);
  };
  return html`<div class="shell">
    <a class="skip" href="#main" onClick=${skipToContent}>Skip to the content</a>
    <header class="top">
      <a class="brand" href="#/">Quire</a>
      <nav aria-label="Main">
        <a href="#/" aria-current=${where.page === 'home' || where.page === 'doc' ? 'page' : undefined}>Notes</a>
        <a href="#/search" aria-current=${where.page === 'search' ? 'page' : undefined}>Search</a>
        ${isAdmin ? html`<a href="#/agent" aria-current=${where.page === 'agent' ? 'page' : undefined}>Agent</a>` : null}
        <a href="#/settings" aria-current=${where.page === 'settings' ? 'page' : undefined}>Settings</a>
      </nav>
      <span class="muted role">${session.name} (${session.role})</span>
      <button type="button" onClick=${signOut}>Sign out</button>
    </header>
    <div class=${`body ${where.page === 'home' || where.page === 'doc' ? 'with-tree' : ''}`}>
      ${where.page === 'home' || where.page === 'doc' ? html`<aside class="side"><${Tree} client=${session.client} current=${where.id} refresh=${refresh} />
        ${isAdmin ? html`<${NewDocument} session=${session} onCreated=${() => setRefresh(refresh + 1)} />` : null}</aside>` : null}
      <main id="main" tabindex="-1">
        ${error ? html`<p class="error" role="alert">${error}</p>` : null}
        ${where.page === 'home' ? html`<p class="muted">Choose a document, or search.</p>` : null}
        ${where.page === 'doc' && where.id ? html`<${DocumentPage} key=${where.id} client=${session.client} id=${where.id} focus=${where.focus} canEdit=${isAdmin} onChanged=${() => setRefresh(refresh + 1)} />` : null}
        ${where.page === 'search' ? html`<${SearchPage} client=${session.client} address=${where.query ?? ''} />` : null}
        ${where.page === 'agent' && isAdmin ? html`<${AgentPage} client=${session.client} sessionId=${where.id} />` : null}
        ${where.page === 'agent' && !isAdmin ? html`<p class="muted">The agent is for administrators: signed in as a ${session.role}, you can read and search the notes.</p>` : null}
        ${where.page === 'settings' ? html`<${SettingsPage} client=${session.client} tab=${where.id} isAdmin=${isAdmin} />` : null}
      </main>
    </div>
  </div>`;
}

function SignIn({ onSignedIn }: { onSignedIn: (session: Session) => void }): VNode {
  const [error, setError] = useState<string>();
  const submit = async (event: Event): Promise<void> => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const token = (form.elements.namedItem('token') as HTMLInputElement).value.trim();
    try {
      onSignedIn(await signIn(token));
    } catch (e) {
      setError(describe(e));
    }
  };
  return html`<main class="signin">
    <h1>Quire</h1>
    <form onSubmit=${submit} autocomplete="off">
      <label for="token">Token</label>
      <input id="token" name="token" type="password" required autofocus spellcheck="false" />
      <p class="muted">The token printed when the kernel started, or one from quire.json. It is kept in this tab only.</p>
      ${error ? html`<p class="error" role="alert">${error}</p>` : null}
      <button type="submit">Sign in</button>
    </form>
  </main>`;
}

function NewDocument({ session, onCreated }: { session: Session; onCreated: () => void }): VNode {
  const [notebooks, setNotebooks] = useState<{ id: string; name: string }[]>([]);
  const [error, setError] = useState<string>();
  useEffect(() => { session.client.call('notebook_list', { body: {} }).then((answer) => setNotebooks(answer.result.notebooks), () => undefined); }, [session]);
  const submit = async (event: Event): Promise<void> => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const title = (form.elements.namedItem('title') as HTMLInputElement).value.trim();
    const notebook = (form.elements.namedItem('notebook') as HTMLSelectElement).value;
    try {
      const created = await session.client.call('document_create', { body: { notebook, title } });
      form.reset();
      setError(undefined);
      onCreated();
      location.hash = `#/doc/${created.result.id}`;
    } catch (e) {
      setError(describe(e));
    }
  };
  // A fresh workspace: where its first notebook is made (there was nothing here, and no way to make one).
  if (notebooks.length === 0) return html`<p class="muted new-doc">No notebook yet: <a href="#/settings/notebooks">make the first one</a> (under Settings, Notebooks).</p>`;
  return html`<form class="new-doc" onSubmit=${submit}>
    <label for="new-title">New document</label>
    <input id="new-title" name="title" required placeholder="Title" />
    <select name="notebook" aria-label="In notebook">${notebooks.map((notebook) => html`<option value=${notebook.id}>${notebook.name}</option>`)}</select>
    <button type="submit">Create</button>
    ${error ? html`<p class="error" role="alert">${error}</p>` : null}
  </form>`;
}

/**
 * The skip link moves focus to the content: followed as a link, `#main` was a route in the hash router,
 * and the page shown was replaced by the home page.
 */
function skipToContent(event: Event): void {
  event.preventDefault();
  document.getElementById('main')?.focus();
}

// Leaving the app (a reload, the tab closed) with anything typed and not saved or sent, on whatever
// page: the browser asks first (it asked only on the document whose editor was open, and the drafts
// kept from the pages left were lost without a word).
window.addEventListener('beforeunload', (event) => {
  if (unsavedNotes() || unsentMessages()) event.preventDefault();
});
