import type { VNode } from 'preact';
import { useState } from 'preact/hooks';
import type { QuireClient } from '../../core/client/quire-client.js';
import { describe, useLoad } from './api.js';
import { html } from './html.js';

interface Notebook { id: string; name: string; access?: 'private' | 'published'; agent: 'write' | 'read' | 'none'; egress: 'allowed' | 'local-only'; documents?: number }

/** A notebook's removal may run as a job: the page waits for its end this long before saying it goes on. */
const REMOVE_WAIT_SECONDS = 60;

/**
 * The notebooks, for administrators: create, rename, publish to readers or keep private, what the agent
 * may do there, whether its text may leave this machine, remove. The page had none of it (a fresh
 * workspace could not get its first notebook from the app); every change goes through the actions the
 * API and the CLI use, so the same rules and audit apply.
 */
export function NotebooksSettings({ client }: { client: QuireClient }): VNode {
  const [notebooks, error, reload] = useLoad(() => client.call('notebook_list', { body: {} }).then((answer) => answer.result.notebooks as Notebook[]), [client]);
  const [problem, setProblem] = useState<string>();
  const [done, setDone] = useState<string>();
  const [removing, setRemoving] = useState<string>();
  const act = async (what: () => Promise<unknown>, said: string | ((answer: unknown) => string)): Promise<void> => {
    try {
      const answer = await what();
      setProblem(undefined);
      setDone(typeof said === 'string' ? said : said(answer));
    } catch (e) {
      setProblem(describe(e));
      setDone(undefined);
    }
    reload();
  };
  const create = async (event: Event): Promise<void> => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const name = (form.elements.namedItem('name') as HTMLInputElement).value.trim();
    const access = (form.elements.namedItem('access') as HTMLSelectElement).value as 'private' | 'published';
    if (name === '') return;
    await act(async () => { await client.call('notebook_create', { body: { name, access } }); form.reset(); }, `Notebook "${name}" created.`);
  };
  if (error) return html`<p class="error" role="alert">${error}</p>`;
  if (!notebooks) return html`<p class="muted">Loading…</p>`;
  return html`<div class="notebooks">
    <form class="row" onSubmit=${create}>
      <label>New notebook <input name="name" required maxlength="512" placeholder="Name" /></label>
      <label>Readers <select name="access" aria-label="Readers of the new notebook"><option value="private">private: administrators and the agent</option><option value="published">published: readers too</option></select></label>
      <button type="submit">Create notebook</button>
    </form>
    ${problem ? html`<p class="error" role="alert">${problem}</p>` : null}
    ${done ? html`<p class="muted" role="status">${done}</p>` : null}
    ${notebooks.length === 0 ? html`<p class="muted">No notebooks yet.</p>` : html`<table>
      <thead><tr><th>Name</th><th>Readers</th><th>The agent</th><th>Models off this machine</th><th>Documents</th><th></th></tr></thead>
      <tbody>${notebooks.map((notebook) => html`<tr key=${notebook.id} data-notebook=${notebook.id}>
        <td><form class="row" onSubmit=${(event: Event) => {
          event.preventDefault();
          const name = ((event.currentTarget as HTMLFormElement).elements.namedItem('name') as HTMLInputElement).value.trim();
          if (name !== '' && name !== notebook.name) void act(() => client.call('notebook_rename', { body: { id: notebook.id, name } }), `Renamed to "${name}".`);
        }}><input name="name" aria-label=${`Name of ${notebook.name}`} value=${notebook.name} maxlength="512" /><button type="submit">Rename</button></form></td>
        <td><select aria-label=${`Readers of ${notebook.name}`} value=${notebook.access ?? 'private'} onChange=${(event: Event) => {
          const access = (event.target as HTMLSelectElement).value as 'private' | 'published';
          void act(() => client.call('notebook_set_access', { body: { id: notebook.id, access } }), access === 'published' ? `"${notebook.name}" is published: readers see it.` : `"${notebook.name}" is private.`);
        }}><option value="private">private</option><option value="published">published</option></select></td>
        <td><select aria-label=${`What the agent may do in ${notebook.name}`} value=${notebook.agent} onChange=${(event: Event) => {
          const agent = (event.target as HTMLSelectElement).value as Notebook['agent'];
          void act(() => client.call('notebook_set_privacy', { body: { id: notebook.id, agent } }), `The agent may now ${agent === 'write' ? 'read and write' : agent === 'read' ? 'only read' : 'not see'} "${notebook.name}".`);
        }}><option value="write">read and write</option><option value="read">read only</option><option value="none">nothing</option></select></td>
        <td><select aria-label=${`Whether the text of ${notebook.name} may go to models off this machine`} value=${notebook.egress} onChange=${(event: Event) => {
          const egress = (event.target as HTMLSelectElement).value as Notebook['egress'];
          void act(() => client.call('notebook_set_privacy', { body: { id: notebook.id, egress } }), egress === 'local-only' ? `"${notebook.name}" stays on this machine.` : `"${notebook.name}" may be sent to remote models.`);
        }}><option value="allowed">allowed</option><option value="local-only">never (local-only)</option></select></td>
        <td>${notebook.documents ?? ''}</td>
        <td>${removing === notebook.id
          ? html`<span role="alert">Remove "${notebook.name}" and its ${notebook.documents ?? 0} documents? <button type="button" class="danger" onClick=${() => { setRemoving(undefined); void act(() => client.action('notebook_remove', { id: notebook.id }, { waitSeconds: REMOVE_WAIT_SECONDS }),
            (answer) => (isJobUnderWay(answer) ? `"${notebook.name}" is being removed (job ${answer.job.id}); it stays listed until that ends.` : `"${notebook.name}" removed.`)); }}>Remove it</button> <button type="button" onClick=${() => setRemoving(undefined)}>Keep it</button></span>`
          : html`<button type="button" class="danger" onClick=${() => setRemoving(notebook.id)}>Remove…</button>`}</td>
      </tr>`)}</tbody>
    </table>`}
  </div>`;
}

/** A long action still running when the wait ended: the answer is its job, not its result. */
function isJobUnderWay(answer: unknown): answer is { job: { id: string } } {
  const job = (answer as { job?: { id?: unknown } } | null)?.job;
  return typeof job?.id === 'string' && !('result' in (answer as object));
}
