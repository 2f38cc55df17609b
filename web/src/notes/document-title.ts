import type { ComponentChildren, VNode } from 'preact';
import type { QuireClient } from '../../../core/client/quire-client.js';
import { describe, QuireApiError } from '../api.js';
import { EditableTitle } from '../editable-title.js';
import { html } from '../html.js';

/**
 * A document's title, and for administrators its rename and removal (the page had neither: only the
 * API and the CLI). Both are checked against the document as shown (`updated`): changed since by
 * someone else, nothing happens, that is said, and the document is shown as it is now.
 */
export function DocumentTitle({ client, id, title, updated, canEdit, onRenamed, onRemoved, children }: {
  client: QuireClient; id: string; title: string; updated: string | undefined; canEdit: boolean;
  onRenamed: () => void; onRemoved: () => void; children?: ComponentChildren;
}): VNode {
  const expected = updated ? { expectedUpdated: updated } : {};
  const failed = (e: unknown): string => {
    onRenamed();
    return e instanceof QuireApiError && e.status === 409 ? 'This document was changed by someone else since it was shown: nothing was done. It is shown as it is now.' : describe(e);
  };
  return html`<${EditableTitle} title=${title} headingId="doc-title" inputLabel="Title of the document" maxLength=${512} canEdit=${canEdit}
    removeWord="Remove" removeQuestion=${`Remove "${title}" and the documents under it?`}
    rename=${(next: string) => client.call('document_rename', { body: { id, title: next, ...expected } }).then(() => { onRenamed(); return undefined; }, failed)}
    remove=${() => client.call('document_remove', { body: { id, ...expected } }).then(() => { onRemoved(); return undefined; }, failed)}>${children}</${EditableTitle}>`;
}
