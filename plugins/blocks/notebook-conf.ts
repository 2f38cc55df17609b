import { jsonSyntaxMessage } from './document-file.js';
export type Access = 'private' | 'published';

/** `.notebook.json`: what a notebook is called, how it sorts, and who may read it. */
export interface NotebookConf {
  name: string;
  icon: string;
  sort: number;
  /** private: administrators and the agent only; published: readers too. */
  access: Access;
  /**
   * `local-only`: its text never goes to a backend that declares dataEgress (a remote embedder); it is
   * embedded by a local one or not at all. Absent: no such limit.
   */
  egress?: 'local-only';
  /**
   * What the agent may do here. `read`: it reads, every write is refused; `none`: nothing of the
   * notebook reaches it through any tool. Absent: it reads and writes (through the gate as always).
   * Only a person changes this (notebook_set_privacy, which the agent is never offered).
   */
  agent?: 'read' | 'none';
}

export type AgentAccess = 'write' | 'read' | 'none';

/** Whether a notebook set to `access` is shown to reader tokens (a person's decision to make, not the agent's). */
export function showsToReaders(access: Access | undefined): boolean {
  return access === 'published';
}

export const NOTEBOOK_CONF_FILE = '.notebook.json';

export type ParsedConf = { ok: true; value: NotebookConf } | { ok: false; message: string };

/** Checks a `.notebook.json` file's text; a hand-edited file with a bad field is reported, not guessed at. */
export function parseNotebookConf(text: string): ParsedConf {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, message: jsonSyntaxMessage(error) };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, message: 'must be a JSON object' };
  const conf = value as Record<string, unknown>;
  if (typeof conf.name !== 'string' || conf.name.trim() === '') return { ok: false, message: '/name must be a non-empty string' };
  if (conf.icon !== undefined && typeof conf.icon !== 'string') return { ok: false, message: '/icon must be a string' };
  if (conf.sort !== undefined && !Number.isInteger(conf.sort)) return { ok: false, message: '/sort must be an integer' };
  if (conf.access !== undefined && conf.access !== 'private' && conf.access !== 'published') return { ok: false, message: "/access must be 'private' or 'published'" };
  if (conf.egress !== undefined && conf.egress !== 'local-only' && conf.egress !== 'allowed') return { ok: false, message: "/egress must be 'allowed' or 'local-only'" };
  if (conf.agent !== undefined && conf.agent !== 'write' && conf.agent !== 'read' && conf.agent !== 'none') return { ok: false, message: "/agent must be 'write', 'read' or 'none'" };
  return {
    ok: true,
    value: {
      name: conf.name, icon: (conf.icon as string | undefined) ?? '', sort: (conf.sort as number | undefined) ?? 0, access: (conf.access as Access | undefined) ?? 'private',
      ...(conf.egress === 'local-only' ? { egress: 'local-only' as const } : {}),
      ...(conf.agent === 'read' || conf.agent === 'none' ? { agent: conf.agent } : {}),
    },
  };
}

export function notebookConfText(conf: NotebookConf): string {
  return `${JSON.stringify({ name: conf.name, icon: conf.icon, sort: conf.sort, access: conf.access, ...(conf.egress ? { egress: conf.egress } : {}), ...(conf.agent ? { agent: conf.agent } : {}) }, null, 2)}\n`;
}

/** Names are shown to people and never reach a path; still, no control characters and a sane length. */
export function checkDisplayName(name: string, field: string): string | undefined {
  if (name.trim() === '') return `${field} must not be empty`;
  if (name.length > 512) return `${field} is longer than 512 characters`;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) return `${field} must not contain control characters`;
  return undefined;
}

