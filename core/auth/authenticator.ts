import { hash, timingSafeEqual } from 'node:crypto';
import type { KernelConfig } from '../config/kernel-config.js';
import { KERNEL_CONFIG, PROCESS_ENV } from '../core-tokens.js';
import { inject, injectable } from '../di.js';
import type { Principal, Role } from '../plugin-api.js';

interface KnownToken {
  name: string;
  role: Role;
  digest: Buffer;
}

/**
 * Checks bearer tokens against the digests configured in quire.json (or read from the environment at
 * start). Digests have a fixed length and every entry is compared, so timing says nothing about which
 * token, or how much of one, matched.
 */
@injectable()
export class Authenticator {
  private readonly known: KnownToken[];

  constructor(
    @inject(KERNEL_CONFIG) config: Pick<KernelConfig, 'auth'>,
    @inject(PROCESS_ENV) env: NodeJS.ProcessEnv,
  ) {
    this.known = [];
    for (const entry of config.auth.tokens) {
      const digest = entry.sha256 !== undefined ? Buffer.from(entry.sha256, 'hex') : digestOf(env[entry.env ?? ''] ?? '');
      // An entry whose environment variable is unset or empty matches nothing.
      if (entry.sha256 === undefined && !env[entry.env ?? '']) continue;
      this.known.push({ name: entry.name, role: entry.role, digest });
    }
  }

  get size(): number {
    return this.known.length;
  }

  /** The principal a bearer token stands for, or undefined when it matches no configured token. */
  authenticate(token: string): Principal | undefined {
    const presented = digestOf(token);
    let match: KnownToken | undefined;
    for (const candidate of this.known) {
      if (timingSafeEqual(candidate.digest, presented) && match === undefined) match = candidate;
    }
    return match ? { kind: 'person', name: match.name, role: match.role } : undefined;
  }
}

export function digestOf(token: string): Buffer {
  return hash('sha256', token, 'buffer');
}
