import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { skillError } from './skill-limits.js';

/** Redirects followed at most, each checked. */
export const MAX_REDIRECTS = 5;

/** This machine's addresses, private networks', link-local and shared ones (where a cloud's metadata service answers). */
export function isInternalAddress(address: string): boolean {
  const v4 = address.toLowerCase().startsWith('::ffff:') ? address.slice(7) : address;
  if (isIP(v4) === 4) {
    const [a = 0, b = 0] = v4.split('.').map(Number);
    return a === 127 || a === 10 || a === 0 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 169 && b === 254) || (a === 100 && b >= 64 && b <= 127);
  }
  const v6 = address.toLowerCase();
  return v6 === '::1' || v6 === '::' || /^f[cd][0-9a-f]{2}:/.test(v6) || /^fe[89ab][0-9a-f]:/.test(v6);
}

/** Whether a host is, or resolves to, an internal address. */
export async function isInternalHost(hostname: string): Promise<boolean> {
  const host = hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0) return isInternalAddress(host);
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  const found = await lookup(host, { all: true }).catch(() => []);
  return found.some((entry) => isInternalAddress(entry.address));
}

/**
 * Where a redirect may lead: http(s) only, never from https down to http, and never from a URL on the
 * internet to this machine or a private network. Followed blindly, the URL the person approved could
 * send the request on to `http://127.0.0.1:…/admin/…` or a cloud's metadata service.
 */
export async function checkRedirect(from: URL, to: URL, startedInternal: boolean): Promise<void> {
  if (to.protocol !== 'https:' && to.protocol !== 'http:') throw skillError('DOWNLOAD_FAILED', `${from.href} redirects to ${to.protocol} (only http and https are followed)`, { url: from.href, to: to.href.slice(0, 300) });
  if (from.protocol === 'https:' && to.protocol === 'http:') throw skillError('DOWNLOAD_FAILED', `${from.href} redirects from https down to http (${to.href.slice(0, 300)}), which is not followed`, { url: from.href, to: to.href.slice(0, 300) });
  if (to.username || to.password) throw skillError('DOWNLOAD_FAILED', `${from.href} redirects to a URL with a user name or password in it, which is not followed`, { url: from.href });
  if (!startedInternal && await isInternalHost(to.hostname)) {
    throw skillError('DOWNLOAD_FAILED', `${from.href} redirects to ${to.host}, an address of this machine or a private network, which is not followed from a URL on the internet`, { url: from.href, to: to.href.slice(0, 300) });
  }
}
