import { randomBytes } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../fs/atomic-write.js';
import { instanceProof, type Kernel } from '../kernel.js';

/** Where a serving kernel is, for clients on this machine (`quire chat`): `<workspace>/.quire/serve.json`. */
export interface ServeAddress {
  url: string;
  pid: number;
  /** The serving kernel's boot id (Kernel.instance), which its /healthz answers. */
  instance: string;
  /** The boot's secret (Kernel.instanceKey): its /healthz proves it holds it by answering a challenge. */
  key: string;
}

/** How long a client waits for `/healthz` before it takes the record for stale. */
const HEALTH_TIMEOUT_MS = 3_000;

export function serveAddressFile(workspaceRoot: string): string {
  return join(workspaceRoot, '.quire', 'serve.json');
}

/**
 * A URL a local client can use: a wildcard bind (0.0.0.0, ::) is not an address to connect to, and the
 * Host guard accepts the loopback names whatever server.allowedHosts says.
 */
function connectable(url: string): string {
  const parsed = new URL(url);
  if (parsed.hostname === '0.0.0.0') parsed.hostname = '127.0.0.1';
  else if (parsed.hostname === '[::]') parsed.hostname = '[::1]';
  return parsed.origin;
}

/**
 * Records where this kernel serves, once it listens, and removes the record when the kernel closes
 * cleanly (only if it is still ours: a later server may have replaced it). Mode 0600 like the admin
 * token beside it; written atomically so a client never reads half a record. Never throws.
 */
export async function recordServeAddress(kernel: Kernel, url: string): Promise<void> {
  const file = serveAddressFile(kernel.workspace.root);
  const record: ServeAddress = { url: connectable(url), pid: process.pid, instance: kernel.instance, key: kernel.instanceKey };
  const text = `${JSON.stringify(record)}\n`;
  try {
    await writeFileAtomic(file, text, { mode: 0o600 });
  } catch (error) {
    // Serving goes on without it: only a local chat beside the server needs the record.
    kernel.log.warn('could not record the serving address', { file, error: error instanceof Error ? error.message : String(error) });
    return;
  }
  kernel.onClose(async () => {
    const current = await readFile(file, 'utf8').catch(() => undefined);
    if (current === text) await rm(file, { force: true });
  });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function parse(text: string): ServeAddress | undefined {
  try {
    const value = JSON.parse(text) as Partial<ServeAddress>;
    if (typeof value.url === 'string' && Number.isInteger(value.pid) && typeof value.instance === 'string' && typeof value.key === 'string') return { url: value.url, pid: value.pid!, instance: value.instance, key: value.key };
  } catch { /* a torn or foreign file counts as none */ }
  return undefined;
}

/**
 * The kernel serving this workspace, if one does: the record must name a live process, and its
 * `/healthz` must answer with the record's instance and prove it holds the record's key (an HMAC of a
 * fresh challenge). A record left by a crash is ignored, also when another server now listens at its
 * address (with the record's pid reused), even one that learnt the instance from the dead kernel's
 * public /healthz: that one would get this workspace's token. A record without an instance or a key
 * (written by an older kernel) counts as none.
 */
export async function findServingKernel(workspaceRoot: string): Promise<ServeAddress | undefined> {
  const text = await readFile(serveAddressFile(workspaceRoot), 'utf8').catch(() => undefined);
  const record = text === undefined ? undefined : parse(text);
  if (!record || !isAlive(record.pid)) return undefined;
  try {
    const challenge = randomBytes(24).toString('base64url');
    const response = await fetch(`${record.url}/healthz?challenge=${challenge}`, { signal: AbortSignal.timeout(HEALTH_TIMEOUT_MS) });
    const body = await response.json() as { ok?: unknown; instance?: unknown; proof?: unknown };
    return response.ok && body.ok === true && body.instance === record.instance && body.proof === instanceProof(record.key, challenge) ? record : undefined;
  } catch {
    return undefined;
  }
}
