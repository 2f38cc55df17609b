import { randomBytes } from 'node:crypto';
import { mkdir, stat } from 'node:fs/promises';
import { writeFileAtomic, writeJsonAtomic } from '../fs/atomic-write.js';
import type { KernelConfigFile } from '../config/kernel-config.js';
import { readJsonFile } from '../util/json-file.js';
import type { Workspace } from '../workspace.js';
import { digestOf } from './authenticator.js';

export interface GeneratedToken {
  token: string;
  file: string;
}

/**
 * On first start (no admin token configured), creates one: the token itself goes to
 * `<workspace>/.quire/admin.token` with mode 0600, only its SHA-256 goes into quire.json.
 * Returns the new token so the CLI can print it once; undefined when an admin token already exists.
 */
export async function ensureAdminToken(workspace: Workspace, config: KernelConfigFile): Promise<GeneratedToken | undefined> {
  if ((config.auth?.tokens ?? []).some((entry) => entry.role === 'admin')) return undefined;
  const token = `qk_${randomBytes(32).toString('base64url')}`;
  await mkdir(workspace.privateDir, { recursive: true, mode: 0o700 });
  await writeFileAtomic(workspace.adminTokenFile, `${token}\n`, { mode: 0o600 });
  // Re-read the file as it is on disk so that fields the schema types do not list are kept verbatim.
  const onDisk = await readJsonFile<Record<string, unknown>>(workspace.configFile, {});
  const auth = (onDisk.auth ?? {}) as { tokens?: unknown[] };
  const tokens = [...(auth.tokens ?? []), { name: 'admin', role: 'admin', sha256: digestOf(token).toString('hex') }];
  // quire.json may hold secrets (an MCP server's headers or env): a file kept private stays so (the write
  // made a new file at the default 0644); a new one is private.
  const mode = (await stat(workspace.configFile).catch(() => undefined))?.mode ?? 0o600;
  await writeJsonAtomic(workspace.configFile, { ...onDisk, auth: { ...auth, tokens } }, { mode: mode & 0o777 });
  return { token, file: workspace.adminTokenFile };
}
