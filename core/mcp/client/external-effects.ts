import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { Effect } from '../../plugin-api.js';

export interface ImportedEffects {
  effects: Effect[];
  destructive: boolean;
  idempotent: boolean;
}

/**
 * Our effects for an external tool (PROTOCOLS.md §1.5). An untrusted server's annotations are not
 * believed: every effect is assumed. A trusted one's are, except that arguments sent to a remote
 * server always leave the machine, and a local tool that may write could write our disk.
 */
export function importEffects(annotations: ToolAnnotations | undefined, server: { remote: boolean; trusted: boolean; costs?: boolean }): ImportedEffects {
  if (!server.trusted) return { effects: ['localWrite', 'dataEgress', 'externalCost'], destructive: true, idempotent: false };
  const readOnly = annotations?.readOnlyHint === true;
  const openWorld = annotations?.openWorldHint !== false;
  const effects: Effect[] = [];
  if (!server.remote && !readOnly) effects.push('localWrite');
  if (server.remote || openWorld) effects.push('dataEgress');
  if (server.costs ?? openWorld) effects.push('externalCost');
  return { effects, destructive: !readOnly && annotations?.destructiveHint !== false, idempotent: annotations?.idempotentHint === true };
}
