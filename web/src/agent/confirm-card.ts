import type { VNode } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { QuireClient } from '../../../core/client/quire-client.js';
import type { Confirmation } from '../../../core/client/api-schema.js';
import { describe, QuireApiError } from '../api.js';
import { html } from '../html.js';
import { useTakeFocus } from './take-focus.js';

const EFFECT_WORDS: Record<string, string> = {
  localWrite: 'changes files on this machine',
  dataEgress: 'sends data off this machine',
  externalCost: 'may cost money',
};

const BLOCK_WRITES = new Set(['block_update', 'block_delete', 'block_move', 'attr_set', 'block_append', 'block_prepend', 'block_insert']);

/**
 * What the agent wants to run, exactly: the action, its effects, its arguments and, for a write to a
 * block, the block as it is and as it would be. Approve, Always allow (a standing grant, listed under
 * Settings), or Deny, for these arguments only (their hash goes with the answer).
 */
export function ConfirmCard({ client, sessionId, confirmation, onAnswered }: { client: QuireClient; sessionId: string; confirmation: Confirmation; onAnswered: (note?: string) => void }): VNode {
  const [before, setBefore] = useState<{ id: string; markdown: string }[]>([]);
  const [wouldWrite, setWouldWrite] = useState<{ name: string; folder: string; files: string[]; replaces: boolean; warnings: string[] }[]>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const args = (confirmation.arguments ?? {}) as Record<string, unknown>;
  useEffect(() => {
    // A skill install from this machine says what it would write: the same call as a dry run writes nothing.
    if (confirmation.wireName === 'skill_install' && typeof args.path === 'string') {
      client.call('skill_install', { body: { ...(args as { path: string }), dryRun: true } })
        .then((answer) => setWouldWrite(((answer.result as { wouldWrite?: typeof wouldWrite }).wouldWrite) ?? []), () => undefined);
      return;
    }
    // The block the call would change or write next to, as it is now (where the arguments name it).
    const ids = [args.id, args.parentId, args.previousId, args.nextId].filter((value): value is string => typeof value === 'string' && /^\d{14}-[0-9a-z]{7}$/.test(value));
    if (!BLOCK_WRITES.has(confirmation.wireName) || ids.length === 0) return;
    Promise.all(ids.slice(0, 1).map((id) => client.call('block_get', { body: { id } }).then((answer) => ({ id, markdown: (answer.result as { markdown: string }).markdown }))))
      .then(setBefore, () => undefined);
  }, [confirmation.id]);
  const after = (): string => {
    const markdown = typeof args.markdown === 'string' ? args.markdown : undefined;
    switch (confirmation.wireName) {
      case 'block_delete': return '(removed, with what it holds)';
      case 'block_update': return markdown ?? '';
      case 'block_move': return '(moved, as it is)';
      case 'attr_set': return JSON.stringify(args.attrs ?? {}, null, 2);
      default: return markdown !== undefined ? `${args.parentId ? 'Added inside it' : 'Added next to it'}:\n${markdown}` : '(see the arguments)';
    }
  };
  const answer = async (approved: boolean, always = false): Promise<void> => {
    setBusy(true);
    try {
      await client.call('answerSessionConfirmation', { params: { id: sessionId, confirmationId: confirmation.id }, body: { approved, argsHash: confirmation.argsHash, ...(always ? { always: true } : {}) } });
      onAnswered();
    } catch (e) {
      // Answered elsewhere (another tab, the chat), or gone (expired, its turn ended): the card is settled,
      // and the person is told instead of meeting the same refusal at every click.
      if (e instanceof QuireApiError && (e.code === 'CONFIRMATION_ALREADY_ANSWERED' || e.code === 'CONFIRMATION_NOT_FOUND')) {
        onAnswered(`The confirmation for ${confirmation.wireName} was no longer waiting: ${describe(e)}.`);
        return;
      }
      setError(describe(e));
      setBusy(false);
    }
  };
  const own = useTakeFocus<HTMLElement>();
  const title = confirmation.kind === 'release' ? 'Send local-only notes to the model?' : confirmation.kind === 'budget' ? 'Go past the budget?' : `Run ${confirmation.wireName}?`;
  return html`<section class="confirm" role="alertdialog" tabindex="-1" ref=${own} aria-labelledby=${`c-${confirmation.id}`} data-confirmation=${confirmation.id}>
    <h3 id=${`c-${confirmation.id}`}>${title}</h3>
    <p class="muted">${confirmation.plugin} / ${confirmation.tool} / ${confirmation.action}${confirmation.destructive ? ' · replaces or removes something' : ''}</p>
    ${confirmation.note ? html`<p>${confirmation.note}</p>` : null}
    <ul class="effects">${confirmation.effects.length === 0 ? html`<li>no effects</li>` : confirmation.effects.map((effect) => html`<li class=${`effect-${effect}`}><strong>${effect}</strong>: ${EFFECT_WORDS[effect] ?? ''}</li>`)}</ul>
    <details open><summary>Arguments</summary><pre class="args">${JSON.stringify(args, null, 2)}</pre></details>
    ${before.map((block) => html`<div class="compare" data-before=${block.id}>
      <div><h4>Now</h4><pre>${block.markdown}</pre></div>
      <div><h4>After</h4><pre>${after()}</pre></div>
    </div>`)}
    ${wouldWrite ? html`<div class="would-write"><h4>It would write</h4>${wouldWrite.length === 0 ? html`<p class="muted">nothing</p>` : wouldWrite.map((skill) => html`<div>
      <p><strong>${skill.name}</strong> → <code>${skill.folder}</code>${skill.replaces ? ' (replaces the skill of that name)' : ''}</p>
      <ul>${skill.files.map((file) => html`<li><code>${file}</code></li>`)}</ul>
      ${skill.warnings.map((warning) => html`<p class="notice">${warning}</p>`)}
    </div>`)}</div>` : null}
    ${error ? html`<p class="error" role="alert">${error}</p>` : null}
    <div class="row">
      <button type="button" class="approve" disabled=${busy} onClick=${() => void answer(true)}>Approve</button>
      ${confirmation.kind === undefined ? html`<button type="button" disabled=${busy} onClick=${() => void answer(true, true)}>Always allow</button>` : null}
      <button type="button" class="deny" disabled=${busy} onClick=${() => void answer(false)}>Deny</button>
    </div>
  </section>`;
}
