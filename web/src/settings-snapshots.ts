import type { VNode } from 'preact';
import { useRef, useState } from 'preact/hooks';
import type { Job } from '../../core/client/api-schema.js';
import type { QuireClient } from '../../core/client/quire-client.js';
import { describe, useLoad } from './api.js';
import { html } from './html.js';

interface SnapshotEntry { id: string; memo?: string; created?: string; origin?: string; tags?: string[] }
interface SnapshotPage { snapshots: SnapshotEntry[]; total: number; next?: string }

/** Snapshots a page at a time (the agent takes two per writing turn: a daily user gathers hundreds). */
const PAGE = 100;

/** Who took a snapshot, in words: a person by name, or the agent's turn. */
function takenBy(origin: string | undefined): string {
  if (!origin) return '';
  if (origin.startsWith('agent:')) return 'the agent (a turn)';
  return origin.replace(/^[a-z]+:/, '');
}

/** The snapshots tab: compare with now, roll back, delete, and older snapshots on request. */
export function Snapshots({ client }: { client: QuireClient }): VNode {
  const list = (before?: string) => client.action('snapshot_list', { limit: PAGE, ...(before ? { before } : {}) } as never) as Promise<SnapshotPage>;
  const [answer, error, reload] = useLoad(() => list(), [client]);
  const [older, setOlder] = useState<SnapshotPage[]>([]);
  const [note, setNote] = useState<string>();
  const [diff, setDiff] = useState<{ id: string; text: string }>();
  // A deletion or a rollback under way: the buttons that change the repository wait for it.
  const [busy, setBusy] = useState(false);
  // Deleted here: left out at once, before the list is read again.
  const [gone, setGone] = useState<ReadonlySet<string>>(new Set());
  // Each start from the newest page is a generation: an older page asked for before it is dropped.
  const generation = useRef(0);
  const startOver = (): void => {
    generation.current++;
    setOlder([]);
    reload();
  };
  const compare = async (id: string): Promise<void> => {
    try {
      const result = await client.action('snapshot_diff', { from: id } as never) as { added: string[]; removed: string[]; changed: string[]; documents: { path: string; blocks: { added: string[]; removed: string[]; changed: string[] } }[] };
      const lines = [
        `Since this snapshot: ${result.added.length} files added, ${result.removed.length} removed, ${result.changed.length} changed.`,
        ...result.documents.map((doc) => `${doc.path}: ${doc.blocks.added.length} blocks added, ${doc.blocks.removed.length} removed, ${doc.blocks.changed.length} changed`),
      ];
      setDiff({ id, text: lines.join('\n') });
    } catch (e) {
      setNote(describe(e));
    }
  };
  const rollback = async (id: string): Promise<void> => {
    if (!confirm('Put the notes back as they were in this snapshot? What is there now is kept in a snapshot first.')) return;
    setBusy(true);
    try {
      const answer = await client.action('snapshot_rollback', { id } as never, { waitSeconds: 120 }) as { job?: Job } | undefined;
      // Still running after the wait (a large workspace): it is a job, followed here to its end.
      if (answer?.job) {
        setNote('Rolling back… (still running)');
        const ended = await jobEnd(client, answer.job);
        setNote(ended.state === 'succeeded' ? 'Rolled back.' : `The rollback ${ended.state.replace('_', ' ')}: ${ended.error?.message ?? ended.stopped ?? 'see the audit log'}`);
      } else setNote('Rolled back.');
      startOver();
    } catch (e) {
      setNote(describe(e));
    } finally {
      setBusy(false);
    }
  };
  const remove = async (snapshot: SnapshotEntry): Promise<void> => {
    if (!confirm(`Delete the snapshot of ${snapshot.created ?? snapshot.id}? The notes cannot be rolled back to it afterwards.`)) return;
    setBusy(true);
    try {
      await client.action('snapshot_delete', { ids: [snapshot.id] } as never);
      setGone((ids) => new Set([...ids, snapshot.id]));
      setNote('Deleted.');
      startOver();
    } catch (e) {
      setNote(describe(e));
    } finally {
      setBusy(false);
    }
  };
  // One page at a time: a second click while one loads would add the same page twice.
  const [loadingOlder, setLoadingOlder] = useState(false);
  const showOlder = async (before: string): Promise<void> => {
    const asked = generation.current;
    setLoadingOlder(true);
    try {
      const page = await list(before);
      if (asked === generation.current) setOlder((pages) => [...pages, page]);
    } catch (e) {
      // The page's last snapshot was deleted meanwhile (by the retention, or elsewhere): start again from the newest.
      setNote(`${describe(e)} The list starts again from the newest.`);
      startOver();
    } finally {
      setLoadingOlder(false);
    }
  };
  if (error) return html`<p class="error" role="alert">${error}</p>`;
  if (!answer) return html`<p class="muted">Loading…</p>`;
  const pages = [answer, ...older];
  const shown = pages.flatMap((page) => page.snapshots).filter((snapshot) => !gone.has(snapshot.id));
  const next = pages.at(-1)!.next;
  return html`<div>${note ? html`<p class="notice" role="status">${note}</p>` : null}
    <p class="muted">${answer.total === 0 ? 'No snapshots yet.' : `${shown.length} of ${answer.total} snapshots, newest first.`}</p>
    <ul class="snapshots">${shown.map((snapshot) => html`<li key=${snapshot.id} data-snapshot=${snapshot.id}>
      <span>${snapshot.created ?? ''}</span> <span class="muted">${snapshot.memo ?? ''} · ${takenBy(snapshot.origin)}${snapshot.tags?.length ? ` · tagged ${snapshot.tags.join(', ')}` : ''}</span>
      <button type="button" onClick=${() => void compare(snapshot.id)}>Changes since</button>
      <button type="button" disabled=${busy} onClick=${() => void rollback(snapshot.id)}>Roll back to this</button>
      <button type="button" disabled=${busy || (snapshot.tags?.length ?? 0) > 0} title=${snapshot.tags?.length ? 'Tagged snapshots are kept: untag it to delete it' : 'Delete this snapshot'} onClick=${() => void remove(snapshot)}>Delete</button>
      ${diff?.id === snapshot.id ? html`<pre>${diff.text}</pre>` : null}
    </li>`)}</ul>
    ${next ? html`<button type="button" class="older" disabled=${loadingOlder} onClick=${() => void showOlder(next)}>Show older snapshots</button>` : null}</div>`;
}

/** A job followed until it ends: its record read again every second (a rollback is rare and ends). */
async function jobEnd(client: QuireClient, job: Job): Promise<Job> {
  let now = job;
  while (now.state === 'running') {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    now = (await client.call('getJob', { params: { id: now.id } })).job;
  }
  return now;
}
