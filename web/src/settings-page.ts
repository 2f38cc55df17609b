import type { VNode } from 'preact';
import { useState } from 'preact/hooks';
import type { Grant, McpServer, Plugin } from '../../core/client/api-schema.js';
import type { QuireClient } from '../../core/client/quire-client.js';
import { describe, useLoad } from './api.js';
import { AuditLogView } from './settings-audit.js';
import { NotebooksSettings } from './settings-notebooks.js';
import { Snapshots } from './settings-snapshots.js';
import { html } from './html.js';

type Tab = 'plugins' | 'notebooks' | 'grants' | 'audit' | 'snapshots' | 'mcp';

/** What limits and extends the agent: plugins and their effects, standing grants, snapshots, MCP servers. */
export function SettingsPage({ client, tab, isAdmin }: { client: QuireClient; tab: Tab; isAdmin: boolean }): VNode {
  const tabs: [Tab, string][] = isAdmin ? [['plugins', 'Plugins'], ['notebooks', 'Notebooks'], ['grants', 'Grants'], ['audit', 'Audit log'], ['snapshots', 'Snapshots'], ['mcp', 'MCP servers']] : [['plugins', 'Plugins']];
  return html`<section class="settings">
    <h1>Settings</h1>
    <nav class="tabs" aria-label="Settings">${tabs.map(([id, label]) => html`<a href=${`#/settings/${id}`} aria-current=${tab === id ? 'page' : undefined}>${label}</a>`)}</nav>
    ${tab === 'plugins' ? html`<${Plugins} client=${client} isAdmin=${isAdmin} />` : null}
    ${tab === 'notebooks' && isAdmin ? html`<${NotebooksSettings} client=${client} />` : null}
    ${tab === 'grants' && isAdmin ? html`<${Grants} client=${client} />` : null}
    ${tab === 'audit' && isAdmin ? html`<${AuditLogView} client=${client} />` : null}
    ${tab === 'snapshots' && isAdmin ? html`<${Snapshots} client=${client} />` : null}
    ${tab === 'mcp' && isAdmin ? html`<${McpServers} client=${client} />` : null}
  </section>`;
}

function Plugins({ client, isAdmin }: { client: QuireClient; isAdmin: boolean }): VNode {
  const [listing, error, reload] = useLoad(() => client.call('listPlugins'), [client]);
  const [problem, setProblem] = useState<string>();
  const toggle = async (plugin: Plugin): Promise<void> => {
    try {
      await client.call('setPluginEnabled', { params: { id: plugin.id }, body: { enabled: !plugin.enabled } });
      setProblem(undefined);
      reload();
    } catch (e) {
      setProblem(describe(e));
    }
  };
  if (error) return html`<p class="error" role="alert">${error}</p>`;
  if (!listing) return html`<p class="muted">Loading…</p>`;
  return html`<div>
    ${problem ? html`<p class="error" role="alert">${problem}</p>` : null}
    <ul class="plugins">${listing.plugins.map((plugin) => html`<li key=${plugin.id} data-plugin=${plugin.id}>
      <div class="row"><strong>${plugin.id}</strong><span class=${`state state-${plugin.state}`}>${plugin.state}</span>
        ${isAdmin ? html`<button type="button" onClick=${() => void toggle(plugin)}>${plugin.enabled ? 'Disable' : 'Enable'}</button>` : null}</div>
      ${plugin.description ? html`<p class="muted">${plugin.description}</p>` : null}
      ${(plugin.tools ?? []).length > 0 ? html`<details><summary>${(plugin.tools ?? []).reduce((sum, tool) => sum + tool.actions.length, 0)} actions</summary>
        <table><thead><tr><th>Action</th><th>Effects</th></tr></thead><tbody>
        ${(plugin.tools ?? []).flatMap((tool) => tool.actions.map((action) => html`<tr><td><code>${action.wireName}</code>${action.unavailable ? html` <span class="muted">(${action.unavailable})</span>` : null}</td><td>${action.effects.join(', ') || 'none'}${action.destructive ? ' · destructive' : ''}</td></tr>`))}
        </tbody></table></details>` : null}
    </li>`)}</ul>
  </div>`;
}

function Grants({ client }: { client: QuireClient }): VNode {
  const [answer, error, reload] = useLoad(() => client.call('listGrants'), [client]);
  const [failed, setFailed] = useState<string>();
  const revoke = async (grant: Grant): Promise<void> => {
    setFailed(undefined);
    await client.call('revokeGrant', { params: { id: grant.id } }).catch((e: unknown) => setFailed(`The grant was not revoked: ${describe(e)}`));
    reload();
  };
  if (error) return html`<p class="error" role="alert">${error}</p>`;
  if (!answer) return html`<p class="muted">Loading…</p>`;
  if (answer.grants.length === 0) return html`<p class="muted">No standing grants: the agent asks before every action with an effect.</p>`;
  return html`${failed ? html`<p class="error" role="alert">${failed}</p>` : null}<ul class="grants">${answer.grants.map((grant) => html`<li key=${grant.id} data-grant=${grant.id}>
    <code>${grant.plugin}/${grant.tool}/${grant.action}</code> <span class="muted">${grant.effects.join(', ')}${grant.notebook ? ` · notebook ${grant.notebook}` : ''}${grant.expiresAt ? ` · until ${grant.expiresAt}` : ''} · by ${grant.createdBy}</span>
    <button type="button" onClick=${() => void revoke(grant)}>Revoke</button>
  </li>`)}</ul>`;
}

function McpServers({ client }: { client: QuireClient }): VNode {
  const [answer, error, reload] = useLoad(() => client.call('listMcpServers'), [client]);
  const [failed, setFailed] = useState<string>();
  const approve = async (server: McpServer, tool: string, hash: string): Promise<void> => {
    setFailed(undefined);
    await client.call('approveMcpTool', { params: { name: server.name, tool }, body: { hash } }).catch((e: unknown) => setFailed(`The tool was not approved: ${describe(e)}`));
    reload();
  };
  if (error) return html`<p class="error" role="alert">${error}</p>`;
  if (!answer) return html`<p class="muted">Loading…</p>`;
  if (answer.servers.length === 0) return html`<p class="muted">No external MCP servers are configured (quire.json, mcp.servers).</p>`;
  return html`${failed ? html`<p class="error" role="alert">${failed}</p>` : null}<ul>${answer.servers.map((server) => html`<li key=${server.name}><strong>${server.name}</strong> <span class="muted">${server.state}</span>
    ${((server.pending ?? []) as { name: string; hash: string; definition?: unknown }[]).map((pending) => html`<div class="pending">
      <p>The tool <code>${pending.name}</code> is new or changed:</p><pre>${JSON.stringify(pending.definition ?? pending, null, 2)}</pre>
      <button type="button" onClick=${() => void approve(server, pending.name, pending.hash)}>Approve this definition</button>
    </div>`)}
  </li>`)}</ul>`;
}
