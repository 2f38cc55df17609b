import { hash, timingSafeEqual } from 'node:crypto';
import type { KernelConfig } from '../config/kernel-config.js';
import { MIN_TOKEN_CHARS } from '../config/config-problems.js';
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
  private readonly digests = new Map<string, Buffer>();

  constructor(
    @inject(KERNEL_CONFIG) config: Pick<KernelConfig, 'auth'>,
    @inject(PROCESS_ENV) env: NodeJS.ProcessEnv,
  ) {
    this.known = [];
    for (const entry of config.auth.tokens) {
      const digest = entry.sha256 !== undefined ? Buffer.from(entry.sha256, 'hex') : digestOf(env[entry.env ?? ''] ?? '');
      // An entry whose environment variable is unset, empty or too short to be a secret matches nothing
      // (reported at start as a configuration problem, config-problems.ts).
      if (entry.sha256 === undefined && (env[entry.env ?? ''] ?? '').length < MIN_TOKEN_CHARS) continue;
      this.known.push({ name: entry.name, role: entry.role, digest });
    }
  }

  get size(): number {
    return this.known.length;
  }

  /** The principal a bearer token stands for, or undefined when it matches no configured token. */
  authenticate(token: string): Principal | undefined {
    const match = this.match(digestOf(token));
    return match ? { kind: 'person', name: match.name, role: match.role } : undefined;
  }

  /**
   * The principal an `Authorization` header stands for (`Bearer <token>`), or undefined. The digest of
   * a header that authenticated is kept, so that a client sending the same header on every request is
   * not hashed each time; the digest is still compared with every configured one in constant time.
   * Only headers that matched are kept (a stranger's guesses fill nothing), at most MAX_KEPT of them.
   */
  authenticateHeader(header: string): Principal | undefined {
    let digest = this.digests.get(header);
    if (digest === undefined) {
      const token = BEARER.exec(header)?.[1];
      if (token === undefined) return undefined;
      digest = digestOf(token);
      const match = this.match(digest);
      if (match && this.digests.size < MAX_KEPT) this.digests.set(header, digest);
      return match ? { kind: 'person', name: match.name, role: match.role } : undefined;
    }
    const match = this.match(digest);
    return match ? { kind: 'person', name: match.name, role: match.role } : undefined;
  }

  /** The digest of the token in an `Authorization` header (kept if it authenticated), or undefined without a token. */
  headerDigest(header: string): Buffer | undefined {
    const kept = this.digests.get(header);
    if (kept) return kept;
    const token = BEARER.exec(header)?.[1];
    return token === undefined ? undefined : digestOf(token);
  }

  /** Digests have a fixed length and every entry is compared, so timing says nothing about which one matched. */
  private match(presented: Buffer): KnownToken | undefined {
    let match: KnownToken | undefined;
    for (const candidate of this.known) {
      if (timingSafeEqual(candidate.digest, presented) && match === undefined) match = candidate;
    }
    return match;
  }
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;
/** Distinct headers whose digest is kept: a few per token (clients differ in spacing and case of "Bearer"). */
const MAX_KEPT = 64;

export function digestOf(token: string): Buffer {
  return hash('sha256', token, 'buffer');
}
