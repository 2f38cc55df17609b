import type { VNode } from 'preact';
import { useState } from 'preact/hooks';
import type { HistoryListOutput } from '../../../core/client/api-schema.js';
import type { QuireClient } from '../../../core/client/quire-client.js';
import { describe, useLoad } from '../api.js';
import { html } from '../html.js';

type Version = HistoryListOutput['versions'][number];

/** A document's earlier versions (kept before each change): look at one as it was, and restore it. */
export function HistoryPanel({ client, id, updated, onRestored }: { client: QuireClient; id: string; updated?: string; onRestored: () => void }): VNode {
  // Read again when the document changes (a save kept a version the open list did not show, and a restore from it missed the newest).
  const [versions, error, reload] = useLoad(() => client.call('history_list', { body: { id } }).then((answer): Version[] => (answer.result as HistoryListOutput).versions), [id, updated]);
  const [shown, setShown] = useState<{ version: string; text: string }>();
  const [note, setNote] = useState<string>();
  const show = async (version: string): Promise<void> => {
    try {
      const answer = await client.call('history_get', { body: { id, version } });
      setShown({ version, text: outline((answer.result as { text: string }).text) });
    } catch (e) {
      setNote(describe(e));
    }
  };
  const restore = async (version: string): Promise<void> => {
    // Asked, as a snapshot's rollback is: one click beside Show replaced the document (a change made meanwhile included).
    if (!confirm(`Put this document back as it was at ${version.slice(0, 19)}? What it holds now is kept in its history.`)) return;
    try {
      await client.call('history_rollback', { body: { id, version } });
      setNote(`Restored the version of ${version.slice(0, 19)}; what it replaced is kept in the history too.`);
      // The version the restore kept of what it replaced is listed at once.
      reload();
      onRestored();
    } catch (e) {
      setNote(describe(e));
    }
  };
  if (!versions) return html`<p class="muted">${error ?? 'Loading the history…'}</p>`;
  return html`<section class="history" aria-label="History of this document">
    <h2>History</h2>
    ${note ? html`<p class="notice" role="status">${note}</p>` : null}
    ${versions.length === 0 ? html`<p class="muted">No earlier versions.</p>` : html`<ol>${versions.map((version) => html`<li key=${version.version}>
      <span>${version.time.replace('T', ' ').slice(0, 19)}</span> <span class="muted">before ${version.op} by ${version.by}</span>
      <button type="button" onClick=${() => void show(version.version)}>Show</button>
      <button type="button" onClick=${() => void restore(version.version)}>Restore</button>
    </li>`)}</ol>`}
    ${shown ? html`<figure><figcaption>As it was (${shown.version.slice(0, 19)})</figcaption><pre>${shown.text}</pre></figure>` : null}
  </section>`;
}

/** A kept document file (the block tree as JSON) as its text, block by block. */
function outline(text: string): string {
  try {
    const lines: string[] = [];
    const visit = (block: { type?: string; content?: string; children?: unknown[] }, depth: number): void => {
      if (block.type !== 'document' && block.content) lines.push(`${'  '.repeat(depth)}${block.content}`);
      for (const child of block.children ?? []) visit(child as typeof block, block.type === 'document' ? depth : depth + 1);
    };
    visit(JSON.parse(text) as { type?: string; content?: string; children?: unknown[] }, 0);
    return lines.join('\n');
  } catch {
    return text;
  }
}
