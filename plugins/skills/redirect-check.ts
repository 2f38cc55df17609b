import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { skillError } from './skill-limits.js';

/** Redirects followed at most, each checked. */
export const MAX_REDIRECTS = 5;

/**
 * This machine's addresses, private networks', link-local and shared ones (where a cloud's metadata
 * service answers), and the IPv6 forms that carry an IPv4 address (mapped, compatible, NAT64, 6to4):
 * `[::ffff:7f00:1]` is 127.0.0.1, and a string test of the address let it through.
 */
const INTERNAL = new BlockList();
for (const [address, prefix] of [['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 3]] as const) {
  INTERNAL.addSubnet(address, prefix, 'ipv4');
}
for (const [address, prefix] of [['::', 96], ['::1', 128], ['64:ff9b::', 96], ['2002::', 16], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8]] as const) {
  INTERNAL.addSubnet(address, prefix, 'ipv6');
}

export function isInternalAddress(address: string): boolean {
  const family = isIP(address);
  return family === 0 ? false : INTERNAL.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * Whether the URL the person approved names this machine or a private network itself (a literal
 * address, or localhost): only then may its redirects lead there. A name is not trusted for it (one with
 * a public and a private address, or none, would have switched every check off).
 */
export function namesInternalHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host.endsWith('.localhost') || isInternalAddress(host);
}

/** Whether a host is, or resolves to, an internal address. */
export async function isInternalHost(hostname: string): Promise<boolean> {
  const host = hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0) return isInternalAddress(host);
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  // A name that cannot be resolved counts as internal: the check fails closed.
  const found = await lookup(host, { all: true }).catch(() => undefined);
  return found === undefined || found.some((entry) => isInternalAddress(entry.address));
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
