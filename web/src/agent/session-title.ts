import type { VNode } from 'preact';
import type { Session } from '../../../core/client/api-schema.js';
import type { QuireClient } from '../../../core/client/quire-client.js';
import { describe, QuireApiError } from '../api.js';
import { EditableTitle } from '../editable-title.js';
import { html } from '../html.js';

/**
 * A session's title, renamed in place (a save without its entries, at the revision shown), and its
 * deletion after a second ask: the page offered neither, and sessions kept their dated names.
 */
export function SessionTitle({ client, session, onChanged, onDeleted }: { client: QuireClient; session: Session | undefined; onChanged: () => void; onDeleted: () => void }): VNode {
  const title = session?.title ?? 'Session';
  const busy = (e: unknown): string => (e instanceof QuireApiError && e.status === 409
    ? `Not now: ${e.message}. A session is renamed or deleted once no turn runs in it or waits to be saved.`
    : describe(e));
  return html`<${EditableTitle} title=${title} inputLabel="Title of the session" maxLength=${500} canEdit=${session !== undefined}
    removeWord="Delete" removeQuestion=${`Delete the session "${title}" and its history?`}
    rename=${(next: string) => client.call('saveSession', { params: { id: session!.id }, body: { title: next, expectedRevision: session!.revision } })
      .then(() => undefined, busy).finally(onChanged)}
    remove=${() => client.call('deleteSession', { params: { id: session!.id } }).then(() => { onDeleted(); return undefined; }, busy)} />`;
}
