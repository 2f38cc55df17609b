import type { VNode } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { QuireClient } from '../../../core/client/quire-client.js';
import { describe, QuireApiError } from '../api.js';
import { html } from '../html.js';
import { Blocks, type BlockActions, type BlockData } from './blocks-view.js';
import { loadAssets } from './assets.js';
import { DocumentTitle } from './document-title.js';
import { HistoryPanel } from './history-panel.js';
import { MovePanel } from './move-panel.js';

interface Conflict { mine: string; theirs: string; theirsUpdated: string }

/**
 * One document: its blocks rendered, a block edited in place as Markdown, a block added at the end.
 * A save sends the `updated` the block had when it was opened; if someone changed it since (409), the
 * person chooses: keep their own text over the new one, take the new one, or go on editing. Nothing
 * typed is lost.
 */
/** Text typed in a block's editor and not saved when its page was left, by block id (this tab only). */
const drafts = new Map<string, { typed: string; opened: string; updated: string; document: string }>();
/** Text typed in a document's "Add to the end" and not added, by document id (this tab only). */
const addDrafts = new Map<string, string>();
/** The editor open on the page shown, if any: what it holds now, and what it opened with. */
let openEditor: (() => { typed: string; opened: string } | undefined) | undefined;

/** Whether anything typed in the notes is unsaved: an open editor, a block's kept draft, an Add box. */
export function unsavedNotes(): boolean {
  const open = openEditor?.();
  return (open !== undefined && open.typed !== open.opened) || [...drafts.values()].some((draft) => draft.typed !== draft.opened)
    || [...addDrafts.values()].some((text) => text.trim() !== '');
}

/** Counts sign-outs: a page that closes after one (its editor's text) keeps nothing for the next person. */
let signedOut = 0;

/** At sign-out: what one person typed and left unsaved is not the next person's to find (and save as theirs). */
export function forgetDrafts(): void {
  signedOut++;
  drafts.clear();
  addDrafts.clear();
}

export function DocumentPage({ client, id, focus, canEdit, onChanged }: { client: QuireClient; id: string; focus?: string; canEdit: boolean; onChanged: () => void }): VNode {
  const [doc, setDoc] = useState<{ document: BlockData; hpath: string; notebook: string; parentId: string | null } | undefined>();
  const [error, setError] = useState<string>();
  // `opened`: the text as the editor opened with it, to tell whether anything was typed since.
  const [editing, setEditing] = useState<{ id: string; markdown: string; updated: string; opened: string } | undefined>();
  const [conflict, setConflict] = useState<Conflict | undefined>();
  const [saving, setSaving] = useState(false);
  // The same, read after an await (state is the render's).
  const savingNow = useRef(false);
  savingNow.current = saving;
  const [deleting, setDeleting] = useState(false);
  const [history, setHistory] = useState(false);
  const [moving, setMoving] = useState(false);
  const root = useRef<HTMLElement>(null);
  // The editor's text as typed: kept here, not in state, so that a keystroke does not render the whole
  // document again (every block's Markdown parsed at each key).
  const typed = useRef('');

  // Whether the page was left (each document has a page of its own): an answer that comes after (a slow
  // read, an Edit clicked before leaving) changes nothing (it took a kept draft, or wrote into the next page's box).
  const left = useRef(false);
  const load = (): Promise<void> => client.call('document_get', { body: { id } }).then(
    (answer) => {
      if (left.current) return;
      const got = answer.result as { document: BlockData; hpath: string; notebook: string; parentId: string | null };
      setDoc(got);
      setError(rescueRemoved(got.document));
    },
    (e: unknown) => { if (!left.current) setError(describe(e)); },
  );
  /**
   * Text typed for blocks of this document that are gone (removed by the agent, another tab, a restore):
   * their editor vanished, no other block could be edited ("save or cancel… first", with nothing to save),
   * and a kept draft asked before every reload for good, out of reach. It goes to the Add box, said.
   */
  const rescueRemoved = (tree: BlockData): string | undefined => {
    const present = new Set<string>();
    const stack = [tree];
    while (stack.length > 0) {
      const block = stack.pop()!;
      present.add(block.id);
      for (const child of block.children ?? []) stack.push(child);
    }
    const rescued: string[] = [];
    for (const [blockId, draft] of drafts) {
      if (draft.document !== id || present.has(blockId)) continue;
      drafts.delete(blockId);
      if (draft.typed !== draft.opened) rescued.push(draft.typed);
    }
    const open = editingNow.current;
    if (open && !present.has(open.id)) {
      if (typed.current !== open.opened) rescued.push(typed.current);
      editingNow.current = undefined;
      setEditing(undefined);
      setConflict(undefined);
    }
    if (rescued.length === 0) return undefined;
    const box = document.getElementById('add-block') as HTMLTextAreaElement | null;
    const text = [box?.value ?? addDrafts.get(id) ?? '', ...rescued].filter((part) => part.trim() !== '').join('\n\n');
    addDrafts.set(id, text);
    if (box) box.value = text;
    return 'A block you were editing was removed meanwhile: what you typed for it is in the Add box below.';
  };
  // What the editor holds when the page goes (another document, another page): kept as a draft of its block.
  const editingNow = useRef(editing);
  editingNow.current = editing;
  // The sign-outs when this page opened: closed by a sign-out (the page goes after it), it keeps nothing.
  const openedAfter = useRef(signedOut);
  const keepDraft = (): void => {
    if (openedAfter.current !== signedOut) return;
    const open = editingNow.current;
    if (open && typed.current !== open.opened) drafts.set(open.id, { typed: typed.current, opened: open.opened, updated: open.updated, document: id });
  };
  // The linked block is scrolled to once a document and link: each save read the document again, and
  // the page jumped back to it from wherever the person was.
  const shownFocus = useRef<string>();
  useEffect(() => {
    left.current = false;
    setDoc(undefined); setEditing(undefined); setConflict(undefined); shownFocus.current = undefined; void load();
    return () => { left.current = true; opening.current++; keepDraft(); };
  }, [id]);
  // What the open editor holds, for the app's question before leaving (app.ts: asked on every page, as
  // the drafts kept from this one outlive it).
  useEffect(() => {
    const mine = (): { typed: string; opened: string } | undefined => (editingNow.current ? { typed: typed.current, opened: editingNow.current.opened } : undefined);
    openEditor = mine;
    return () => { if (openEditor === mine) openEditor = undefined; };
  }, []);
  // After every render: a block whose editor closed (Cancel) shows its image again (kept images cost nothing).
  useEffect(() => { if (doc && root.current) void loadAssets(client, root.current); });
  useEffect(() => {
    if (!doc || !root.current || !focus || shownFocus.current === focus) return;
    const target = root.current.querySelector(`[data-block="${CSS.escape(focus)}"]`);
    if (!target) return;
    shownFocus.current = focus;
    target.scrollIntoView({ block: 'center' });
    target.classList.add('focused');
  }, [doc, focus]);
  // A closed editor gives the cursor back to its block's Edit button (it went to the top of the page,
  // and a keyboard user tabbed through the whole document again).
  const closedEditor = useRef<string>();
  const closeEditor = (): void => {
    if (editing) closedEditor.current = editing.id;
    setEditing(undefined);
    setConflict(undefined);
    setDeleting(false);
  };
  // In the render's own task (a layout effect): an effect ran a frame later, and a key pressed meanwhile went elsewhere.
  useLayoutEffect(() => {
    const closed = closedEditor.current;
    if (closed === undefined || editing || !root.current) return;
    const button = root.current.querySelector<HTMLButtonElement>(`.block[data-block="${CSS.escape(closed)}"] > button.edit`);
    if (button) {
      button.focus();
      closedEditor.current = undefined;
    }
  });

  // The latest Edit asked for: an earlier one answered later (two quick clicks) opened over it and dropped its kept draft.
  const opening = useRef(0);
  const edit = async (block: BlockData): Promise<void> => {
    // Another block's editor holds typed text: opening this one would drop it.
    if (editing && editing.id !== block.id && (typed.current !== editing.opened || conflict)) {
      setError('Save or cancel the block you are editing first: its changes are not saved.');
      return;
    }
    // A save under way closes the editor when it is done: it would close the one opened meanwhile.
    if (saving) return;
    const ticket = ++opening.current;
    try {
      const answer = await client.call('block_get', { body: { id: block.id } });
      if (ticket !== opening.current || left.current) return;
      // A save under way closes the editor when it is done: it would close this one.
      if (savingNow.current) return;
      // Text typed meanwhile in the editor open then: opening this one would drop it.
      const openNow = editingNow.current;
      if (openNow && openNow.id !== block.id && typed.current !== openNow.opened) {
        setError('Save or cancel the block you are editing first: its changes are not saved.');
        return;
      }
      const got = answer.result as { markdown: string; updated?: string; block?: { attrs?: Record<string, string> } };
      const updated = got.updated ?? got.block?.attrs?.updated ?? block.attrs.updated ?? '';
      // Text typed here before the page was left comes back; saved, it is checked against the block as it was then
      // (changed since, the conflict is shown), and Cancel drops it.
      const draft = drafts.get(block.id);
      drafts.delete(block.id);
      typed.current = draft?.typed ?? got.markdown;
      setEditing({ id: block.id, markdown: typed.current, opened: draft?.opened ?? got.markdown, updated: draft?.updated ?? updated });
      setConflict(undefined);
      // A removal asked about for another block is not carried over to this one.
      setDeleting(false);
      setError(draft ? 'Your unsaved text from before is back in the editor: save it, or cancel to drop it.' : undefined);
    } catch (e) {
      if (ticket === opening.current && !left.current) setError(describe(e));
    }
  };

  const save = async (markdown: string, expectedUpdated: string | undefined): Promise<void> => {
    if (!editing) return;
    savingNow.current = true;
    setSaving(true);
    try {
      await client.call('block_update', { body: { id: editing.id, markdown, ...(expectedUpdated ? { expectedUpdated } : {}) } });
      closeEditor();
      await load();
      onChanged();
    } catch (e) {
      if (e instanceof QuireApiError && e.status === 409) {
        try {
          const now = await client.call('block_get', { body: { id: editing.id } }).then((answer) => answer.result as { markdown: string; updated?: string; block?: { attrs?: Record<string, string> } });
          setConflict({ mine: markdown, theirs: now.markdown, theirsUpdated: now.updated ?? now.block?.attrs?.updated ?? '' });
        } catch (reread) {
          // Changed, then removed (or unreachable): the person is told, and the text stays in the editor.
          setError(`This block was changed by someone else, and it could not be read again (${describe(reread)}); your text is still in the editor.`);
        }
      } else setError(describe(e));
    } finally {
      savingNow.current = false;
      setSaving(false);
    }
  };

  // A task ticked or unticked: its marker changed in its Markdown, against the block as shown (changed
  // since by someone else, nothing is written and the page shows the block as it is now).
  const toggleTask = async (block: BlockData): Promise<void> => {
    try {
      const got = (await client.call('block_get', { body: { id: block.id } })).result as { markdown: string };
      const marker = /^(\s*(?:[-*+]|\d+[.)])\s+)\[([ xX])\]/.exec(got.markdown);
      if (!marker) throw new Error('this item has no task box in its Markdown any more');
      const markdown = `${marker[1]}[${marker[2] === ' ' ? 'x' : ' '}]${got.markdown.slice(marker[0].length)}`;
      const expectedUpdated = block.attrs.updated;
      await client.call('block_update', { body: { id: block.id, markdown, ...(expectedUpdated ? { expectedUpdated } : {}) } });
      await load();
      onChanged();
    } catch (e) {
      // Said after the document is read again (a successful read clears the page's error).
      await load();
      setError(e instanceof QuireApiError && e.status === 409 ? 'This task was changed by someone else: it is shown as it is now; tick it again if you still mean to.' : describe(e));
    }
  };
  // A block removed, after the person says so twice.
  const remove = async (block: BlockData): Promise<void> => {
    if (!editing) return;
    // The only block of a list item or a quote takes its container with it (a bare "-" or ">" was left,
    // which the page has no editor for).
    const holder = doc ? soleHolder(doc.document, block.id) : undefined;
    const target = holder ? { id: holder.id, ...(holder.attrs.updated ? { expectedUpdated: holder.attrs.updated } : {}) } : { id: block.id, ...(editing.updated ? { expectedUpdated: editing.updated } : {}) };
    // The cursor goes to the next block's Edit (or the Add box): it fell to the page's top, and a keyboard
    // user started again from there.
    // (The block edited is its editor now, which carries its id too.)
    const gone = root.current?.querySelector(`[data-block="${CSS.escape(target.id)}"]`);
    const next = gone ? [...root.current!.querySelectorAll<HTMLElement>('.block[data-block]')]
      .find((element) => !gone.contains(element) && (gone.compareDocumentPosition(element) & Node.DOCUMENT_POSITION_FOLLOWING) !== 0) : undefined;
    try {
      await client.call('block_delete', { body: target });
      closedEditor.current = next?.dataset.block;
      setEditing(undefined);
      setConflict(undefined);
      setDeleting(false);
      drafts.delete(block.id);
      await load();
      if (!next) document.getElementById('add-block')?.focus();
      onChanged();
    } catch (e) {
      setDeleting(false);
      setError(e instanceof QuireApiError && e.status === 409 ? 'This block was changed by someone else since you opened it: nothing was deleted. Cancel to see it as it is now.' : describe(e));
    }
  };

  // Blocks that did not change keep the actions of the render that drew them (they are memoised): their
  // Edit reaches this render's `edit`, which knows what is being edited now, through this ref.
  const editNow = useRef(edit);
  editNow.current = edit;
  const toggleNow = useRef(toggleTask);
  toggleNow.current = toggleTask;

  // One append at a time: a second click while the first was answered appended the text twice.
  const [appending, setAppending] = useState(false);
  const appendingNow = useRef(false);
  const add = async (event: Event): Promise<void> => {
    event.preventDefault();
    // Read at submit (not kept in state at each key, which rendered the document again).
    const form = event.currentTarget as HTMLFormElement;
    const box = form.elements.namedItem('markdown') as HTMLTextAreaElement;
    const adding = box.value;
    if (adding.trim() === '' || appendingNow.current) return;
    appendingNow.current = true;
    setAppending(true);
    try {
      await client.call('block_append', { body: { parentId: id, markdown: adding } });
      // What was typed while it was added stays (a reset of the form emptied the box and forgot it).
      // (Changed within what was added: kept whole, rather than lost.)
      const rest = box.value.startsWith(adding) ? box.value.slice(adding.length).replace(/^\n+/, '') : box.value;
      box.value = rest;
      if (rest === '') addDrafts.delete(id);
      else addDrafts.set(id, rest);
      await load();
    } catch (e) {
      setError(describe(e));
    } finally {
      appendingNow.current = false;
      setAppending(false);
    }
  };

  // The opened editor takes the cursor: autofocus works once a page in Chromium (the sign-in field had it), and typing went nowhere.
  // At the end of the text: at its start, what was typed went before the block's text.
  // A layout effect, run before the browser takes the next key: an effect ran a frame later (longer on
  // a busy machine), and what was typed at once went to the removed Edit button, or a select-all and
  // the new text were put after the old text when the caret moved to the end meanwhile.
  useLayoutEffect(() => {
    const area = editing ? document.getElementById(`edit-${editing.id}`) as HTMLTextAreaElement | null : null;
    area?.focus();
    // Before the block's closing line break, which would put what is typed on a line of its own.
    const end = area?.value.replace(/\n+$/, '').length ?? 0;
    area?.setSelectionRange(end, end);
  }, [editing?.id]);

  const editor = (block: BlockData): VNode => html`<form class="editor" data-block=${block.id} onSubmit=${(event: Event) => { event.preventDefault(); void save((event.currentTarget as HTMLFormElement).markdown.value, editing?.updated); }}>
    <label class="sr-only" for=${`edit-${block.id}`}>Markdown of the block</label>
    <textarea id=${`edit-${block.id}`} name="markdown" rows=${Math.min(20, Math.max(3, (editing?.markdown ?? '').split('\n').length + 1))} autofocus
      onInput=${(event: Event) => {
        typed.current = (event.target as HTMLTextAreaElement).value;
        // While a conflict is shown, "Yours" follows what is typed (rendering then is the point).
        if (conflict) setConflict({ ...conflict, mine: typed.current });
      }}>${editing?.markdown ?? ''}</textarea>
    ${conflict ? html`<div class="conflict" role="alert">
      <p><strong>This block was changed by someone else while you edited it.</strong> Your text is kept below; choose what to keep.</p>
      <div class="compare"><div><h4>Theirs (now)</h4><pre>${conflict.theirs}</pre></div><div><h4>Yours</h4><pre>${conflict.mine}</pre></div></div>
      <div class="row">
        <button type="button" onClick=${() => void save(typed.current, conflict.theirsUpdated)}>Keep mine</button>
        <button type="button" onClick=${() => { closeEditor(); void load(); }}>Use theirs</button>
        <button type="button" onClick=${() => { setEditing({ id: block.id, markdown: typed.current, opened: conflict.theirs, updated: conflict.theirsUpdated }); setConflict(undefined); }}>Go on editing</button>
      </div>
    </div>` : null}
    <div class="row">
      <button type="submit" disabled=${saving}>Save</button>
      <button type="button" onClick=${closeEditor}>Cancel</button>
      ${deleting
        ? html`<span role="alert">Delete this block? <button type="button" class="danger" onClick=${() => void remove(block)}>Delete it</button> <button type="button" onClick=${() => setDeleting(false)}>Keep it</button></span>`
        : html`<button type="button" class="danger" onClick=${() => setDeleting(true)}>Delete…</button>`}
    </div>
  </form>`;

  const actions: BlockActions = {
    blockHref: (block) => `#/block/${block}`,
    tagHref: (tag) => `#/search?q=${encodeURIComponent(`#${tag}#`)}`,
    canEdit,
    edit: (block) => void editNow.current(block),
    toggleTask: (block) => void toggleNow.current(block),
    editor,
    ...(editing ? { editing: editing.id } : {}),
  };
  if (error && !doc) return html`<p class="error" role="alert">${error}</p>`;
  if (!doc) return html`<p class="muted">Loading…</p>`;
  return html`<article ref=${root} class="document" aria-labelledby="doc-title">
    <p class="hpath muted">${doc.hpath}</p>
    <${DocumentTitle} client=${client} id=${id} title=${doc.document.content ?? ''} updated=${doc.document.attrs.updated} canEdit=${canEdit}
      onRenamed=${() => { void load(); onChanged(); }} onRemoved=${() => { onChanged(); location.hash = '#/'; }}>
      ${canEdit ? html`<button type="button" aria-expanded=${history} onClick=${() => setHistory(!history)}>History</button>` : null}
      ${canEdit ? html`<button type="button" aria-expanded=${moving} onClick=${() => setMoving(!moving)}>Move…</button>` : null}
    </${DocumentTitle}>
    ${moving ? html`<${MovePanel} key=${`${id} ${doc.document.attrs.updated ?? ''}`} client=${client} id=${id} notebook=${doc.notebook} parentId=${doc.parentId} updated=${doc.document.attrs.updated}
      onMoved=${() => { setMoving(false); void load(); onChanged(); }} />` : null}
    ${history ? html`<${HistoryPanel} client=${client} id=${id} updated=${doc.document.attrs.updated} onRestored=${() => { void load(); onChanged(); }} />` : null}
    ${error ? html`<p class="error" role="alert">${error}</p>` : null}
    <${Blocks} blocks=${doc.document.children ?? []} actions=${actions} />
    ${canEdit ? html`<form class="add" key=${id} onSubmit=${add}>
      <label for="add-block">Add to the end (Markdown)</label>
      <textarea id="add-block" name="markdown" rows="3" onInput=${(event: Event) => addDrafts.set(id, (event.target as HTMLTextAreaElement).value)}>${addDrafts.get(id) ?? ''}</textarea>
      <button type="submit" disabled=${appending}>Add</button>
    </form>` : null}
  </article>`;
}

/** The list item or quote whose only child is `id`, or undefined. */
function soleHolder(root: BlockData, id: string): BlockData | undefined {
  for (const child of root.children ?? []) {
    if ((child.type === 'listItem' || child.type === 'blockquote' || child.type === 'callout') && child.children?.length === 1 && child.children[0]!.id === id) return child;
    const found = soleHolder(child, id);
    if (found) return found;
  }
  return undefined;
}
