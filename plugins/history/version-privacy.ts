import { KernelError, localOnlyAmong, type ActionCall } from '../../core/index.js';
import { showsToReaders, type Access } from '../blocks/notebook-conf.js';

/** Its notebook's privacy when a version was kept (absent in versions kept before it was recorded). */
export interface KeptPrivacy { access?: string; egress?: string }

type Notebooks = ReadonlyMap<string, { access?: string; egress?: string }>;

/** The privacy to keep with a version of a document in this notebook now. */
export function privacyOf(conf: { access?: string; egress?: string } | undefined): KeptPrivacy {
  return conf ? { access: conf.access ?? 'private', egress: conf.egress ?? 'allowed' } : {};
}

const agentLike = (call: Pick<ActionCall, 'principal'>): boolean => call.principal.kind === 'agent' || call.principal.kind === 'mcp';
const keptLocalOnly = (version: KeptPrivacy): boolean => localOnlyAmong([['version', version]]).size > 0;

/**
 * Whether a version may reach this caller as far as the privacy it was written under goes (its notebooks'
 * present rules are checked beside): a reader sees only what was written while the notebook was published
 * (a secret written while it was private, deleted before the person published it, was read from its
 * history; a version kept before this was recorded is not a reader's either); the agent and MCP clients
 * see what was written while the notebook was local-only only while it still is (their results are then
 * withheld as its notes are).
 */
export function keptPrivacyAllows(call: Pick<ActionCall, 'principal'>, version: KeptPrivacy & { notebook: string }, notebooks: () => Notebooks): boolean {
  if (call.principal.role === 'reader' && !showsToReaders(version.access as Access | undefined)) return false;
  // The notebooks are asked for only when needed: a search judges every version it reads.
  return !(agentLike(call) && keptLocalOnly(version) && !localOnlyAmong(notebooks()).has(version.notebook));
}

/**
 * A version the agent or an MCP client puts back into a notebook more open than the one it was written
 * in: refused, only a person takes notes out of a local-only or private notebook (the gate asks about
 * moves between notebooks, but cannot see a version's past). A version kept before its privacy was
 * recorded counts as private, and as local-only if its notebook is now.
 */
export function refuseOpening(call: Pick<ActionCall, 'principal'>, version: KeptPrivacy & { notebook: string }, to: string, notebooks: Notebooks): void {
  if (!agentLike(call)) return;
  const localOnly = localOnlyAmong(notebooks);
  const fromLocalOnly = version.egress !== undefined ? keptLocalOnly(version) : localOnly.has(version.notebook);
  if (fromLocalOnly && !localOnly.has(to)) {
    throw new KernelError('ACTION_DENIED', `history_rollback would put a version written in a notebook marked local-only into notebook '${to}', which is not: only a person can take notes out of a local-only notebook`,
      { details: { notebook: version.notebook, reason: 'local_only_crossing' } });
  }
  // A version kept before its privacy was recorded counts as written while private: a person can still put it back.
  if (!showsToReaders(version.access as Access | undefined) && showsToReaders(notebooks.get(to)?.access as Access | undefined)) {
    throw new KernelError('ACTION_DENIED', `history_rollback would put a version written while its notebook was private into notebook '${to}', which readers see: only a person can publish it`,
      { details: { notebook: version.notebook, reason: 'private_version' } });
  }
}
