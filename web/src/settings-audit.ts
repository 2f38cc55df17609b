import type { VNode } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { AuditRecord } from '../../core/client/api-schema.js';
import type { QuireClient } from '../../core/client/quire-client.js';
import { describe } from './api.js';
import { html } from './html.js';

type Outcome = '' | 'ok' | 'error' | 'refused' | 'egress_denied';

/** The audit log, newest first: filter by outcome, plugin or caller, page back, and verify the chain. */
export function AuditLogView({ client }: { client: QuireClient }): VNode {
  const [outcome, setOutcome] = useState<Outcome>('');
  const [principal, setPrincipal] = useState('');
  const [records, setRecords] = useState<AuditRecord[]>([]);
  const [next, setNext] = useState<number>();
  const [error, setError] = useState<string>();
  const [verified, setVerified] = useState<string>();
  // The filter the shown records were read with: "Older" pages with it, not with a caller typed since.
  const applied = useRef<{ outcome: Outcome; principal: string }>({ outcome: '', principal: '' });
  // Only the newest load's answer is shown: quick filter changes must not mix or swap pages.
  const latest = useRef(0);
  const load = async (before?: number): Promise<void> => {
    const filter = before ? applied.current : { outcome, principal };
    const asked = ++latest.current;
    try {
      const answer = await client.call('auditLog', { query: { limit: 100, ...(filter.outcome ? { outcome: filter.outcome } : {}), ...(filter.principal ? { principal: filter.principal } : {}), ...(before ? { before } : {}) } });
      if (asked !== latest.current) return;
      applied.current = filter;
      setRecords((shown) => (before ? [...shown, ...answer.records] : answer.records));
      setNext(answer.next);
      setError(undefined);
    } catch (e) {
      if (asked === latest.current) setError(describe(e));
    }
  };
  useEffect(() => { void load(); }, [outcome]);
  const verify = async (): Promise<void> => {
    try {
      const { verification } = await client.call('verifyAudit');
      const result = verification as { ok: boolean; lines: number; line?: number; reason?: string };
      setVerified(result.ok ? `The chain holds: ${result.lines} lines, none altered, removed or reordered.` : `The chain is broken at line ${result.line}: ${result.reason}`);
    } catch (e) {
      setVerified(describe(e));
    }
  };
  return html`<div class="audit">
    <form class="row" onSubmit=${(event: Event) => { event.preventDefault(); void load(); }}>
      <label>Outcome <select value=${outcome} onChange=${(event: Event) => setOutcome((event.target as HTMLSelectElement).value as Outcome)}>
        <option value="">all</option><option value="ok">ok</option><option value="error">error</option><option value="refused">refused</option><option value="egress_denied">egress denied</option>
      </select></label>
      <label>Caller <input value=${principal} placeholder="alice, agent, mcp" onInput=${(event: Event) => setPrincipal((event.target as HTMLInputElement).value)} /></label>
      <button type="submit">Filter</button>
      <button type="button" onClick=${() => void verify()}>Verify the chain</button>
    </form>
    ${verified ? html`<p class="notice" role="status">${verified}</p>` : null}
    ${error ? html`<p class="error" role="alert">${error}</p>` : null}
    <div class="table"><table>
      <thead><tr><th>#</th><th>Time</th><th>Caller</th><th>Action</th><th>Effects</th><th>Outcome</th></tr></thead>
      <tbody>${records.map((record) => html`<tr key=${record.seq} class=${`outcome-${record.outcome}`}>
        <td>${record.seq}</td><td>${record.time.replace('T', ' ').slice(0, 19)}</td><td>${record.principal.name}</td>
        <td><code>${record.plugin}/${record.tool}/${record.action}</code></td><td>${record.effects.join(', ')}</td><td>${record.outcome}${record.errorCode ? ` (${record.errorCode})` : ''}</td>
      </tr>`)}</tbody>
    </table></div>
    ${next ? html`<button type="button" onClick=${() => void load(next)}>Older</button>` : null}
  </div>`;
}
