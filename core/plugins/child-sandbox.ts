import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** How a plugin's process is confined, as GET /api/plugins shows it. */
export interface SandboxInfo {
  /** Node's permission model is on: reads only of its own folder, no child processes, workers or addons. */
  permissions: boolean;
  /** `cut`: its own network namespace with no interface up; `guarded`: only the in-process guard. */
  network: 'cut' | 'guarded';
  /** `none`, or `scratch`: its empty working folder, when an action declares localWrite. */
  writes: 'none' | 'scratch';
}

export interface SandboxPlan {
  command: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  info: SandboxInfo;
}

export interface SandboxRequest {
  pluginDir: string;
  /** The working folder: empty, created by `createScratch`, removed with the plugin. */
  cwd: string;
  declaresEgress: boolean;
  declaresLocalWrite: boolean;
}

/** The compiled child host: beside this module when running from dist/, in dist/ when running from the sources. */
export function childHostScript(): string | undefined {
  for (const candidate of ['./plugin-child-host.js', '../../dist/core/plugins/plugin-child-host.js']) {
    const path = fileURLToPath(new URL(candidate, import.meta.url));
    if (existsSync(path)) return path;
  }
  return undefined;
}

export function createScratch(pluginId: string): Promise<string> {
  return mkdtemp(join(tmpdir(), `quire-plugin-${pluginId}-`));
}

export async function removeScratch(folder: string): Promise<void> {
  await rm(folder, { recursive: true, force: true }).catch(() => undefined);
}

/**
 * The command that starts a plugin's host process. Node's permission model where this Node has it:
 * reading only the plugin's folder, the host's own code and its working folder; writing nowhere, or
 * only its working folder when an action declares localWrite; no child processes, workers, addons or
 * WASI. On Linux, a plugin none of whose actions declares dataEgress gets a network namespace of its
 * own (an unprivileged user namespace via `unshare`, when the system allows one): no interface is up,
 * so no connection leaves it, guard or no guard. The environment is empty: the kernel's keys stay home.
 */
export function planSandbox(hostScript: string, request: SandboxRequest): SandboxPlan {
  const nodeArgs: string[] = [];
  const permission = permissionFlag();
  if (permission) {
    nodeArgs.push(permission, `--allow-fs-read=${request.pluginDir}`, `--allow-fs-read=${hostCodeRoot(hostScript)}`, `--allow-fs-read=${request.cwd}`);
    if (request.declaresLocalWrite) nodeArgs.push(`--allow-fs-write=${request.cwd}`);
    // Node 25 and later confine the network too; an action that declares dataEgress needs it.
    if (request.declaresEgress && hasFlag('--allow-net')) nodeArgs.push('--allow-net');
    if (hasFlag('--disable-warning')) nodeArgs.push('--disable-warning=ExperimentalWarning');
  }
  nodeArgs.push(hostScript);
  const unshare = request.declaresEgress ? undefined : unshareCommand();
  const env: NodeJS.ProcessEnv = { TMPDIR: request.cwd, ...(process.env.TZ ? { TZ: process.env.TZ } : {}) };
  const info: SandboxInfo = { permissions: permission !== undefined, network: unshare ? 'cut' : 'guarded', writes: request.declaresLocalWrite && permission ? 'scratch' : 'none' };
  if (unshare) return { command: unshare, args: ['--user', '--net', '--', process.execPath, ...nodeArgs], cwd: request.cwd, env, info };
  return { command: process.execPath, args: nodeArgs, cwd: request.cwd, env, info };
}

function hasFlag(flag: string): boolean {
  return process.allowedNodeEnvironmentFlags.has(flag);
}

/** `--permission` from Node 22.13 and 23.5, `--experimental-permission` in Node 20 and 21. */
function permissionFlag(): string | undefined {
  if (hasFlag('--permission')) return '--permission';
  if (hasFlag('--experimental-permission')) return '--experimental-permission';
  return undefined;
}

/**
 * The folder of the kernel's compiled code (`dist/`, or the package root when run from there): the host
 * imports a few kernel modules (the egress guard, errors) and Node reads package.json for module types.
 */
function hostCodeRoot(hostScript: string): string {
  return dirname(dirname(dirname(hostScript)));
}

let unshareChecked: string | null | undefined;

/** `unshare` when this system lets an unprivileged process create a user and network namespace; checked once. */
function unshareCommand(): string | undefined {
  if (unshareChecked !== undefined) return unshareChecked ?? undefined;
  unshareChecked = null;
  if (process.platform !== 'linux') return undefined;
  const path = (process.env.PATH ?? '/usr/bin:/bin').split(delimiter).map((folder) => join(folder, 'unshare')).find((candidate) => existsSync(candidate));
  if (!path) return undefined;
  const probe = spawnSync(path, ['--user', '--net', '--', 'true'], { stdio: 'ignore', timeout: 5000 });
  if (probe.status === 0) unshareChecked = path;
  return unshareChecked ?? undefined;
}
