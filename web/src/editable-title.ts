import type { ComponentChildren, VNode } from 'preact';
import { useState } from 'preact/hooks';
import { html } from './html.js';

/**
 * A page's title with a rename in place and a removal asked twice, for what the page shows (a
 * document, a session). `rename` and `remove` answer an error to show, or nothing when done.
 */
export function EditableTitle({ title, headingId, inputLabel, maxLength, canEdit, removeWord, removeQuestion, rename, remove, children }: {
  title: string; headingId?: string; inputLabel: string; maxLength: number; canEdit: boolean;
  removeWord: string; removeQuestion: string;
  rename: (next: string) => Promise<string | undefined>; remove: () => Promise<string | undefined>; children?: ComponentChildren;
}): VNode {
  const [mode, setMode] = useState<'show' | 'rename' | 'remove'>('show');
  const [error, setError] = useState<string>();
  // The title typed, kept over the one shown when a rename was refused.
  const [draft, setDraft] = useState<string>();
  const saveTitle = async (event: Event): Promise<void> => {
    event.preventDefault();
    const next = ((event.currentTarget as HTMLFormElement).elements.namedItem('title') as HTMLInputElement).value.trim();
    const problem = next !== '' && next !== title ? await rename(next) : undefined;
    setError(problem);
    // Refused (someone changed the document since, the network): the field stays open with what was typed (it closed, and the title typed was gone).
    setDraft(problem === undefined ? undefined : next);
    if (problem === undefined) setMode('show');
  };
  const removeIt = async (): Promise<void> => {
    const problem = await remove();
    if (problem !== undefined) {
      setError(problem);
      setMode('show');
    }
  };
  return html`<div class="title-block">
    ${mode === 'rename'
      ? html`<form class="row title-row" onSubmit=${saveTitle}>
          <input name="title" aria-label=${inputLabel} value=${draft ?? title} maxlength=${maxLength} required autofocus />
          <button type="submit">Save title</button><button type="button" onClick=${() => { setDraft(undefined); setMode('show'); }}>Cancel</button>
          ${draft !== undefined ? html`<span class="muted">The title now: ${title}</span>` : null}
        </form>`
      : html`<div class="row title-row"><h1 id=${headingId}>${title}</h1>
          ${canEdit ? html`<button type="button" onClick=${() => { setError(undefined); setMode('rename'); }}>Rename</button>` : null}
          ${children}
          ${canEdit && mode !== 'remove' ? html`<button type="button" class="danger" onClick=${() => setMode('remove')}>${removeWord}…</button>` : null}
        </div>`}
    ${mode === 'remove' ? html`<p role="alert">${removeQuestion} <button type="button" class="danger" onClick=${() => void removeIt()}>${removeWord} it</button> <button type="button" onClick=${() => setMode('show')}>Keep it</button></p>` : null}
    ${error ? html`<p class="error" role="alert">${error}</p>` : null}
  </div>`;
}
