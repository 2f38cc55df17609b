import dns, { type LookupAddress, type LookupOptions } from 'node:dns';
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

/**
 * A `lookup` for a connection that may reach only the internet: the name is resolved once, here, and
 * refused when any of its addresses is internal. The check is on the addresses the connection uses:
 * resolved once for a check and again to connect, a name could answer a public address first and
 * 127.0.0.1 next (DNS rebinding). Literal addresses never come here (net connects to them directly):
 * checkRedirect judges those.
 */
export function internetOnlyLookup(hostname: string, options: LookupOptions, callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void): void {
  // dns.lookup is read at each call, so that whatever the process resolves with is what is checked.
  dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, []);
    const inward = addresses.find((entry) => isInternalAddress(entry.address));
    if (inward !== undefined || addresses.length === 0) {
      return callback(skillError('DOWNLOAD_FAILED', `${hostname} resolves to ${inward?.address ?? 'no address'}, an address of this machine or a private network, which is not followed from a URL on the internet`, { host: hostname }), []);
    }
    if (options.all === true) return callback(null, addresses);
    return callback(null, addresses[0]!.address, addresses[0]!.family);
  });
}

/**
 * Where a redirect may lead: http(s) only, never from https down to http, and never from a URL on the
 * internet to this machine or a private network. Followed blindly, the URL the person approved could
 * send the request on to `http://127.0.0.1:…/admin/…` or a cloud's metadata service. A literal address
 * or `localhost` is judged here; a name where the request connects (internetOnlyLookup).
 */
export function checkRedirect(from: URL, to: URL, startedInternal: boolean): void {
  if (to.protocol !== 'https:' && to.protocol !== 'http:') throw skillError('DOWNLOAD_FAILED', `${from.href} redirects to ${to.protocol} (only http and https are followed)`, { url: from.href, to: to.href.slice(0, 300) });
  if (from.protocol === 'https:' && to.protocol === 'http:') throw skillError('DOWNLOAD_FAILED', `${from.href} redirects from https down to http (${to.href.slice(0, 300)}), which is not followed`, { url: from.href, to: to.href.slice(0, 300) });
  if (to.username || to.password) throw skillError('DOWNLOAD_FAILED', `${from.href} redirects to a URL with a user name or password in it, which is not followed`, { url: from.href });
  if (!startedInternal && namesInternalHost(to.hostname)) {
    throw skillError('DOWNLOAD_FAILED', `${from.href} redirects to ${to.host}, an address of this machine or a private network, which is not followed from a URL on the internet`, { url: from.href, to: to.href.slice(0, 300) });
  }
}
