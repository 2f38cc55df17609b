import type { VNode } from 'preact';
import { memo } from 'preact/compat';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { Confirmation, Session, SessionEntry } from '../../../core/client/api-schema.js';
import type { QuireClient } from '../../../core/client/quire-client.js';
import { describe, QuireApiError } from '../api.js';
import { html } from '../html.js';
import { ConfirmCard } from './confirm-card.js';
import { QuestionCard, type PendingQuestion } from './question-card.js';
import { ToolCall } from './tool-call.js';
import { renderAnswer } from './answer-markdown.js';
import { SessionTitle } from './session-title.js';
import { useFollowEnd } from './follow-end.js';
import { runTurn, type Live, type LiveCall } from './turn-stream.js';

/** A message typed and not sent, by session (this tab only): kept when another session is opened, asked about before leaving. */
const composed = new Map<string, string>();

export function unsentMessages(): boolean {
  return [...composed.values()].some((text) => text.trim() !== '');
}

/** What a turn stopped without an error of its own says under its answer. */
const STOPPED = 'Stopped before it was finished.';

/** Counts sign-outs: a send that comes back after one (its message refused) keeps nothing for the next person. */
let signedOut = 0;

/** At sign-out: not the next person's. */
export function forgetComposed(): void {
  signedOut++;
  composed.clear();
}


/** The agent: a session's conversation, a turn streamed as it runs, and what it asks of the person. */
export function AgentPage({ client, sessionId }: { client: QuireClient; sessionId: string | undefined }): VNode {
  const [sessions, setSessions] = useState<{ id: string; title: string; updatedAt: string }[]>([]);
  const [error, setError] = useState<string>();
  // Sessions past the first 50 were out of reach: pages more on request, and a search by title.
  const [pages, setPages] = useState(1);
  const [total, setTotal] = useState(0);
  const [find, setFind] = useState('');
  const listed = useRef(0);
  const reloadList = (): void => {
    const asked = ++listed.current;
    void (async () => {
      const found = new Map<string, { id: string; title: string; updatedAt: string }>();
      let count = 0;
      for (let page = 1; page <= pages; page++) {
        const answer = await client.call('listSessions', { query: { page, pageSize: SESSIONS_PAGE, ...(find.trim() ? { title: find.trim() } : {}) } });
        count = answer.total;
        for (const session of answer.sessions) found.set(session.id, session);
        if (answer.sessions.length < SESSIONS_PAGE) break;
      }
      if (asked !== listed.current) return;
      setSessions([...found.values()]);
      setTotal(count);
    })().catch((e: unknown) => setError(describe(e)));
  };
  useEffect(reloadList, [client, pages, find]);
  const create = async (): Promise<void> => {
    try {
      const saved = await client.call('createSession', { body: { title: `Session ${new Date().toLocaleString()}` } });
      location.hash = `#/agent/${saved.session.id}`;
      reloadList();
    } catch (e) {
      setError(describe(e));
    }
  };
  return html`<section class="agent">
    <aside class="sessions" aria-label="Sessions">
      <button type="button" onClick=${() => void create()}>New session</button>
      ${error ? html`<p class="error" role="alert">${error}</p>` : null}
      <input type="search" aria-label="Find a session by its title" placeholder="Find a session" value=${find} onInput=${(event: Event) => { setFind((event.target as HTMLInputElement).value); setPages(1); }} />
      <ul>${sessions.map((session) => html`<li key=${session.id}><a href=${`#/agent/${session.id}`} aria-current=${session.id === sessionId ? 'page' : undefined}>${session.title}</a></li>`)}</ul>
      ${total > sessions.length ? html`<button type="button" class="earlier" onClick=${() => setPages(pages + 1)}>Show more sessions (${total - sessions.length} not shown)</button>` : null}
    </aside>
    ${sessionId ? html`<${Chat} key=${sessionId} client=${client} sessionId=${sessionId} onChanged=${reloadList} />` : html`<p class="muted">Choose a session or start one.</p>`}
  </section>`;
}

function Chat({ client, sessionId, onChanged }: { client: QuireClient; sessionId: string; onChanged: () => void }): VNode {
  const [session, setSession] = useState<Session>();
  const [live, setLive] = useState<Live>();
  const [pending, setPending] = useState<{ confirmations: Confirmation[]; questions: PendingQuestion[] }>({ confirmations: [], questions: [] });
  const [message, setTyped] = useState(() => composed.get(sessionId) ?? '');
  const openedAfter = useRef(signedOut);
  const setMessage = (text: string): void => {
    if (openedAfter.current !== signedOut) return;
    if (text === '') composed.delete(sessionId);
    else composed.set(sessionId, text);
    setTyped(text);
  };
  const [error, setError] = useState<string>();
  const [undo, setUndo] = useState<{ text: string; turnId?: string; conflicts?: { path: string; id?: string }[] }>();
  const [mode, setMode] = useState<'confirm' | 'auto'>('confirm');
  // The turn's stream broke while the turn went on in the kernel: what broke it, said while the page follows the turn.
  const [lost, setLost] = useState<string>();
  const [shown, setShown] = useState(PAGE_ENTRIES);
  // The person's message of the turn the page runs: shown above its live answer until the stored session has it.
  const [asked, setAsked] = useState<string>();
  // From a send until its turn's end is shown (the stored session read): a message sent, or Undo pressed,
  // in between had its view wiped by that late end, and Undo still named the turn before.
  const [ending, setEnding] = useState(false);
  const sending = useRef(false);
  // Confirmations the turn's stream announced, and those answered here: a list fetched before the
  // newest one existed must neither hide it nor bring back one already answered.
  const announced = useRef(new Map<string, Confirmation>());
  const answered = useRef(new Set<string>());
  const end = useRef<HTMLDivElement>(null);
  // The copy shown, for a poll that asks only for what changed since: the session's last entries, from
  // `offset` on (opening a long session, and each turn's end, read all of it: tens of MB), and the task
  // list as it stands when it may have been written before them.
  const held = useRef<Held>();
  const [offset, setOffset] = useState(0);
  const [heldTodos, setHeldTodos] = useState<Todo[]>();
  // How many entries from the end to read: a page more with each "Show earlier" past those held.
  const wanted = useRef(PAGE_ENTRIES);
  const hold = (next: Session, from = 0, todos?: Todo[]): void => {
    held.current = { session: next, offset: from };
    setSession(next);
    setOffset(from);
    setHeldTodos(from > 0 ? todos ?? [] : undefined);
    // The session's own mode: one already in auto must not show "Ask before effects".
    setMode(next.permissionMode ?? 'confirm');
  };
  const read = () => client.call('getSession', { params: { id: sessionId }, query: { tail: wanted.current } });
  const load = (): Promise<void> => read().then((answer) => hold(answer.session, answer.entriesFrom, answer.todos), (e: unknown) => {
    // Deleted elsewhere (another tab, the CLI): a message typed for it is no longer asked about on leaving.
    if (e instanceof QuireApiError && e.status === 404) composed.delete(sessionId);
    setError(describe(e));
  });
  // Following a turn started elsewhere: the entries from the turn's on (the whole of a long session,
  // tens of MB, was read every 2 s); the kernel starts earlier when the copy held is out of date.
  const follow = (): Promise<void> => {
    const copy = held.current;
    if (!copy) return load();
    const { session: before, offset: from } = copy;
    return client.call('getSession', { params: { id: sessionId }, query: { entriesFrom: before.recoveryFrom ?? from + before.entries.length, revision: before.revision, tail: wanted.current } }).then((answer) => {
      if (held.current !== copy) return; // a newer copy came meanwhile
      const start = answer.entriesFrom ?? 0;
      // Joined to the copy held when it follows on from it; else (another revision) it is the tail anew.
      if (start >= from) hold({ ...answer.session, entries: [...before.entries.slice(0, start - from), ...answer.session.entries] }, from, answer.todos);
      else hold(answer.session, start, answer.todos);
    }, (e: unknown) => setError(describe(e)));
  };
  // Only the newest list is shown: an older answer arriving late must not bring back what was answered since.
  const pendingAsked = useRef(0);
  const loadPending = (): Promise<void> => {
    const asked = ++pendingAsked.current;
    return client.call('pendingInSession', { params: { id: sessionId } }).then((answer) => {
      if (asked === pendingAsked.current) setPending(answer as { confirmations: Confirmation[]; questions: PendingQuestion[] });
    }, () => undefined);
  };
  useEffect(() => { void load(); void loadPending(); }, [sessionId]);
  const following = useFollowEnd(end, session !== undefined, [session, live?.content.length, live?.calls.length, pending]);
  // A turn that runs without this page following it (started before a reload, or elsewhere): it can be
  // stopped here, and the session is read again until it ends.
  const runningElsewhere = !live && session?.recoveryState === 'running';
  useEffect(() => {
    if (!runningElsewhere) return undefined;
    const timer = setInterval(() => { void follow(); void loadPending(); }, 2000);
    return () => clearInterval(timer);
  }, [runningElsewhere, sessionId]);

  // The box as typed now, for a send that comes back after the person typed on.
  const typedNow = useRef(message);
  typedNow.current = message;
  const send = async (event: Event): Promise<void> => {
    event.preventDefault();
    const text = message.trim();
    // A ref as well: two Enters before the next render both read `ending` false.
    if (text === '' || live?.state === 'running' || runningElsewhere || sending.current) return;
    sending.current = true;
    setEnding(true);
    try {
      await sendNow(text);
    } finally {
      sending.current = false;
      setEnding(false);
    }
  };
  const sendNow = async (text: string): Promise<void> => {
    // Their own message and its answer are followed, wherever they had scrolled.
    following.follow();
    setMessage('');
    setAsked(text);
    setError(undefined);
    setUndo(undefined);
    setLost(undefined);
    const state = await runTurn(client, sessionId, text, {
      update: setLive,
      confirm: (confirmation) => {
        announced.current.set(confirmation.id, confirmation);
        setPending((now) => ({ ...now }));
      },
      question: () => void loadPending(),
    });
    // Refused before it began (no model, a turn already running, too long, the network): nothing of the
    // message was kept, so it goes back in the box unless something new was typed meanwhile.
    const backInBox = state.turnID === undefined && state.error !== undefined && typedNow.current === '';
    if (backInBox) setMessage(text);
    // The turn is over: what it asked is answered or expired; the kernel's list says what still waits.
    announced.current.clear();
    // The stored session replaces the live view in one render: the answer is never shown twice.
    const fresh = await read().catch(() => undefined);
    if (fresh) hold(fresh.session, fresh.entriesFrom, fresh.todos);
    // Shown until now, in the same render as the stored session that holds it (it went when the stream
    // ended, and came back only with the stored session: a moment without the person's message); kept
    // beside the live answer when the session cannot be read; gone with a message never sent.
    if (fresh || (state.turnID === undefined && state.error !== undefined)) setAsked(undefined);
    const refused = state.turnID === undefined && state.error !== undefined;
    if (fresh?.session.recoveryState === 'running' && refused) {
      // Another turn runs (another tab, the chat): this message was not sent, and the page follows that
      // turn. It was said as "the connection to the turn was lost", as if this message were being answered.
      setLive(undefined);
      setError(`Your message was not sent: ${state.error}. ${backInBox ? 'It is back in the box; send it once the running turn has ended.' : `What you typed since is kept; the message not sent was: ${text}`}`);
    } else if (fresh?.session.recoveryState === 'running') {
      // The stream broke (the network, a sleeping laptop) but the turn goes on in the kernel: the page
      // follows it as one it did not start, so that its confirmations appear and Stop is there.
      setLive(undefined);
      setLost(state.error ?? 'the stream ended early');
    } else if (fresh && (state.error || (state.stopped && !fresh.session.entries.some((entry) => entry.id === `runtime_draft_${String(state.turnID)}`)))) {
      // The stored session holds what arrived; the live view keeps only what went wrong (the answer was
      // shown twice), or that the turn was stopped (a Stop during a call, or before the first word, read
      // as a finished answer; one stopped while its text came is marked on that text).
      setLive({ ...state, reasoning: '', content: '', calls: [], usage: undefined, error: state.error ?? STOPPED });
    } else setLive(fresh ? undefined : { ...state, ...(state.stopped && !state.error ? { error: STOPPED } : {}) });
    // The end is shown: the next message may go (not after the pending list's read as well).
    sending.current = false;
    setEnding(false);
    await loadPending();
    onChanged();
  };

  const cancel = async (): Promise<void> => {
    const answer = await client.call('cancelTurn', { params: { id: sessionId } }).catch((e: unknown) => { setError(describe(e)); return undefined; });
    if (answer?.cancelled) setError(undefined);
    if (runningElsewhere) await load();
  };
  const undoTurn = async (turnId: string, force = false): Promise<void> => {
    try {
      const result = await client.call('rollbackTurn', { params: { id: sessionId, turnId }, body: force ? { force: true } : {} }) as { mode?: string; conflicts?: { path: string; id?: string }[] };
      const conflicts = result.conflicts ?? [];
      setUndo(conflicts.length > 0 && !force
        ? { text: `Undone where nobody changed the blocks since. Changed by both, and left as they are:`, turnId, conflicts }
        : { text: `Turn undone (${result.mode === 'restore' ? 'its snapshot restored' : 'the blocks it changed put back'}).` });
      await load();
    } catch (e) {
      setUndo({ text: describe(e) });
    }
  };
  const changeMode = async (next: 'confirm' | 'auto'): Promise<void> => {
    try {
      await client.call('setSessionMode', { params: { id: sessionId }, body: { mode: next } });
      setMode(next);
    } catch (e) {
      setError(describe(e));
    }
  };

  // The newest entries only, a page more on request: a long session's every message and result in the
  // page made each render and the browser's layout slow.
  const entries = session?.entries ?? [];
  // The draft of a turn still running is being written; any other kept draft is an answer that stopped.
  const drafting = session?.recoveryState === 'running' ? `runtime_draft_${String(session.recoveryTurnID)}` : undefined;
  const hidden = Math.max(0, entries.length - shown);
  // Earlier than those held: read on request.
  const notShown = offset + hidden;
  const showEarlier = (): void => {
    setShown(shown + PAGE_ENTRIES);
    if (hidden < PAGE_ENTRIES && offset > 0) {
      wanted.current = entries.length + PAGE_ENTRIES;
      void load();
    }
  };
  // Stored entries are not walked again at each streamed token: only when the session changes. Entries
  // held from later than the first: the list as the kernel keeps it (it may have been written before them).
  const storedTodos = useMemo(() => (heldTodos ? { found: true, todos: heldTodos } : latestTodos(session?.entries ?? [], [])), [session, heldTodos]);
  const liveTodos = latestTodos([], live?.calls ?? []);
  const todos = liveTodos.found ? liveTodos.todos : storedTodos.todos;
  // A turn undone whole already is not offered again (a second undo took back what was written since).
  // Once per stored session, not at each streamed token (the entries may be thousands).
  const lastTurn = useMemo(() => (session?.entries.some((entry) => entry.type === 'rollback' && entry.turnID === session.lastCommittedTurnID && entry.conflicts?.length === 0)
    ? undefined : session?.lastCommittedTurnID), [session]);
  return html`<div class="chat">
    <header class="row">
      <${SessionTitle} client=${client} session=${session} onChanged=${() => { void load(); onChanged(); }} onDeleted=${() => { composed.delete(sessionId); onChanged(); location.hash = '#/agent'; }} />
      ${todos.length > 0 ? html`<details class="todos"><summary>To do (${todos.filter((todo) => todo.status === 'completed').length}/${todos.length})</summary>
        <ul aria-label="The agent's to-do list">${todos.map((todo) => html`<li class=${`todo-${todo.status}`}>${todo.status === 'completed' ? '☑' : todo.status === 'in_progress' ? '◐' : '☐'} ${todo.content}</li>`)}</ul></details>` : null}
      <label>Mode <select value=${mode} onChange=${(event: Event) => void changeMode((event.target as HTMLSelectElement).value as 'confirm' | 'auto')}>
        <option value="confirm">Ask before effects</option><option value="auto">Run without asking</option>
      </select></label>
    </header>
    <div class="conversation">
    <ol class="entries" aria-live="polite">
      ${notShown > 0 ? html`<li class="entry system"><button type="button" class="earlier" onClick=${showEarlier}>Show ${Math.min(notShown, PAGE_ENTRIES)} earlier messages (${notShown} not shown)</button></li>` : null}
      ${entries.slice(hidden).map((entry) => html`<${Entry} key=${entry.id} entry=${entry} drafting=${entry.id === drafting} />`)}
      ${asked !== undefined ? html`<li class="entry user live"><p>${asked}</p></li>` : null}
      ${live ? html`<li class="entry assistant live" aria-busy=${live.state === 'running'}>
        ${live.reasoning ? html`<details class="reasoning"><summary>Reasoning</summary><p>${live.reasoning}</p></details>` : null}
        ${live.calls.map((call) => html`<${ToolCall} key=${call.id} name=${call.name} args=${call.arguments} output=${call.output} ok=${call.ok} progress=${call.progress} />`)}
        <div class="content">${live.content.length <= LIVE_MARKDOWN_CHARS ? renderAnswer(live.content) : html`<p>${live.content}</p>`}</div>
        ${live.usage ? html`<p class="muted usage">${live.usage}</p>` : null}
        ${live.error ? html`<p class="error" role="alert">${live.error}</p>` : null}
      </li>` : null}
    </ol>
    ${waiting(pending.confirmations, announced.current, answered.current).map((confirmation) => html`<${ConfirmCard} key=${confirmation.id} client=${client} sessionId=${sessionId} confirmation=${confirmation}
      onAnswered=${(note?: string) => { answered.current.add(confirmation.id); announced.current.delete(confirmation.id); if (note) setError(note); void loadPending(); }} />`)}
    ${pending.questions.map((question) => html`<${QuestionCard} key=${question.id} client=${client} sessionId=${sessionId} question=${question} onAnswered=${() => void loadPending()} />`)}
    ${error ? html`<p class="error" role="alert">${error}</p>` : null}
    ${undo ? html`<div class="notice" role="status"><p>${undo.text}</p>
      ${undo.conflicts?.length ? html`<ul>${undo.conflicts.slice(0, 50).map((conflict) => html`<li><${ConflictItem} client=${client} conflict=${conflict} /></li>`)}</ul>
        <button type="button" onClick=${() => void undoTurn(undo.turnId!, true)}>Undo them too (what is there now is kept in history)</button>` : null}
    </div>` : null}
    <div ref=${end}></div>
    </div>
    <form class="composer" onSubmit=${send}>
      <label class="sr-only" for="message">Message to the agent</label>
      <textarea id="message" rows="2" value=${message} placeholder="Ask about your notes…" onInput=${(event: Event) => setMessage((event.target as HTMLTextAreaElement).value)}
        onKeyDown=${(event: KeyboardEvent) => { if (event.key === 'Enter' && !event.shiftKey && !event.isComposing && event.keyCode !== 229) { event.preventDefault(); (event.currentTarget as HTMLTextAreaElement).form?.requestSubmit(); } }}></textarea>
      ${live?.state === 'running' || runningElsewhere
        ? html`<button type="button" class="cancel" onClick=${() => void cancel()}>Stop</button>`
        : html`<button type="submit" disabled=${ending}>Send</button>`}
      ${runningElsewhere ? html`<p class="muted" role="status">${lost
        ? `The connection to the turn was lost (${lost}); the turn goes on, and this page follows it: what it asks appears here, and its answer as it is written.`
        : 'A turn is running that this page did not start; its answer appears here as it is written.'}</p>` : null}
      ${lastTurn && live?.state !== 'running' && !runningElsewhere && !ending ? html`<button type="button" class="undo" onClick=${() => void undoTurn(lastTurn)}>Undo last turn</button>` : null}
    </form>
  </div>`;
}

/**
 * A streamed answer is read as Markdown again at each token: up to this length (a few ms); past it, it
 * is shown as text until it is stored (a 1 MB answer took 0.3-0.7 s a token).
 */
const LIVE_MARKDOWN_CHARS = 20_000;

/** Sessions listed at first, and added by each "Show more sessions". */
const SESSIONS_PAGE = 50;

/** Entries of a session shown at first, and added by each "Show earlier". */
const PAGE_ENTRIES = 200;

/** A block the undo left: where it is and what it says now (the file path only when it is gone). */
function ConflictItem({ client, conflict }: { client: QuireClient; conflict: { path: string; id?: string } }): VNode {
  const [found, setFound] = useState<{ hpath: string; markdown: string }>();
  useEffect(() => {
    if (conflict.id) client.call('block_get', { body: { id: conflict.id } }).then((answer) => setFound(answer.result as { hpath: string; markdown: string }), () => undefined);
  }, [conflict.id]);
  if (conflict.path === '*') return html`<span>everything changed since the turn</span>`;
  if (!conflict.id) return html`<span>${conflict.path}</span>`;
  const text = found ? found.markdown.trim() : '';
  return html`<a href=${`#/block/${conflict.id}`}>${found ? `${found.hpath}: ${text.length > 80 ? `${text.slice(0, 80)}…` : text}` : conflict.path}</a>`;
}

/** One stored entry; memoised: a streamed token re-renders the live answer, not the whole conversation. */
/** `drafting`: the answer of the turn running now, still being written (a kept draft is a stopped answer). */
const Entry = memo(function Entry({ entry, drafting }: { entry: SessionEntry; drafting: boolean }): VNode | null {
  switch (entry.type) {
    case 'user': return html`<li class="entry user"><p>${entry.content ?? ''}</p></li>`;
    case 'assistant': return html`<li class="entry assistant">
      ${(entry.toolCalls ?? []).map((call) => html`<${ToolCall} key=${call.id} name=${call.name} args=${typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {})} output=${call.result} ok=${call.ok !== false && call.state !== 'unknown' && call.state !== 'skipped'} />`)}
      ${entry.content ? html`<div class="content">${renderAnswer(entry.content)}</div>` : null}
      ${entry.id.startsWith('runtime_draft_') && !drafting ? html`<p class="muted stopped">Stopped before it was finished: this is what had arrived of the answer.</p>` : null}
    </li>`;
    case 'thinking': return entry.content ? html`<li class="entry thinking"><details class="reasoning"><summary>Reasoning</summary><p>${entry.content}</p></details></li>` : null;
    case 'rollback': return html`<li class="entry system muted">A turn was undone.</li>`;
    default: return null;
  }
});

/** The confirmations to show: those the kernel lists as pending and those the stream announced since, but none answered here. */
function waiting(listed: readonly Confirmation[], announced: ReadonlyMap<string, Confirmation>, answered: ReadonlySet<string>): Confirmation[] {
  const all = new Map<string, Confirmation>();
  for (const confirmation of listed) if (confirmation.status === 'pending') all.set(confirmation.id, confirmation);
  for (const [id, confirmation] of announced) if (!all.has(id)) all.set(id, confirmation);
  return [...all.values()].filter((confirmation) => !answered.has(confirmation.id));
}

interface Todo { content: string; status: string }

/** The session as held: its entries from `offset` on. */
interface Held { session: Session; offset: number }

/** The agent's to-do list: what its last `todo_write` call wrote (stored entries, then live calls); `found` when there was one. */
function latestTodos(entries: readonly SessionEntry[], live: readonly LiveCall[]): { found: boolean; todos: Todo[] } {
  let last: { arguments?: unknown } | undefined = live.findLast((call) => call.name === 'todo_write');
  for (let i = entries.length - 1; i >= 0 && !last; i--) last = entries[i]!.toolCalls?.findLast((call) => call.name === 'todo_write');
  if (!last) return { found: false, todos: [] };
  try {
    const args = (typeof last.arguments === 'string' ? JSON.parse(last.arguments) : last.arguments) as { todos?: Todo[] };
    return { found: true, todos: Array.isArray(args.todos) ? args.todos.filter((todo) => typeof todo.content === 'string') : [] };
  } catch {
    return { found: true, todos: [] };
  }
}
