import { MAX_REDIRECTS, checkRedirect, namesInternalHost } from './redirect-check.js';
import { skillError } from './skill-limits.js';

const DOWNLOAD_TIMEOUT_MS = 60_000;

/**
 * The bytes at an http(s) URL, at most `maxBytes`: refused from the Content-Length when it says more,
 * and cut off while reading when a server sends more than it said (or said nothing).
 */
export async function download(url: string, maxBytes: number, signal: AbortSignal): Promise<Buffer> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw skillError('DOWNLOAD_FAILED', `'${url.slice(0, 200)}' is not a URL`, { url: url.slice(0, 200) });
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw skillError('DOWNLOAD_FAILED', `only http and https URLs are downloaded, not ${parsed.protocol}`, { url: parsed.href });
  if (parsed.username || parsed.password) throw skillError('DOWNLOAD_FAILED', 'a URL with a user name or password in it is refused (it would be stored in the audit record)', {});
  const stop = AbortSignal.any([signal, AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS)]);
  const startedInternal = namesInternalHost(parsed.hostname);
  let response: Response;
  // Redirects followed by hand, each checked (redirect-check.ts).
  for (let hops = 0; ; hops++) {
    try {
      response = await fetch(parsed, { signal: stop, redirect: 'manual' });
    } catch (error) {
      if (signal.aborted) throw error;
      throw skillError('DOWNLOAD_FAILED', `${parsed.href} could not be downloaded: ${(error as Error).cause instanceof Error ? ((error as Error).cause as Error).message : (error as Error).message}`, { url: parsed.href });
    }
    const location = response.status >= 300 && response.status < 400 ? response.headers.get('location') : null;
    if (location === null) break;
    await response.body?.cancel().catch(() => undefined);
    if (hops >= MAX_REDIRECTS) throw skillError('DOWNLOAD_FAILED', `${url.slice(0, 200)} redirects more than ${MAX_REDIRECTS} times`, { url: url.slice(0, 200) });
    let next: URL;
    try {
      next = new URL(location, parsed);
    } catch {
      throw skillError('DOWNLOAD_FAILED', `${parsed.href} redirects to '${location.slice(0, 200)}', which is not a URL`, { url: parsed.href });
    }
    await checkRedirect(parsed, next, startedInternal);
    parsed = next;
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined);
    throw skillError('DOWNLOAD_FAILED', `${parsed.href} answered HTTP ${response.status}`, { url: parsed.href, status: response.status });
  }
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw skillError('ARCHIVE_TOO_LARGE', `${parsed.href} is ${declared} bytes, more than the ${maxBytes} an archive may have`, { url: parsed.href, limit: maxBytes });
  }
  const chunks: Buffer[] = [];
  let received = 0;
  for await (const chunk of response.body ?? []) {
    received += (chunk as Uint8Array).length;
    if (received > maxBytes) {
      await response.body?.cancel().catch(() => undefined);
      throw skillError('ARCHIVE_TOO_LARGE', `${parsed.href} sent more than the ${maxBytes} bytes an archive may have`, { url: parsed.href, limit: maxBytes });
    }
    chunks.push(Buffer.from(chunk as Uint8Array));
  }
  return Buffer.concat(chunks);
}
