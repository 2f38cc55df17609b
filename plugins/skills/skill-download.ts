import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { MAX_REDIRECTS, checkRedirect, internetOnlyLookup, namesInternalHost } from './redirect-check.js';
import { remoteFailure, skillError } from './skill-limits.js';

const DOWNLOAD_TIMEOUT_MS = 60_000;

/**
 * The bytes at an http(s) URL, at most `maxBytes`: refused from the Content-Length when it says more,
 * and cut off while reading when a server sends more than it said (or said nothing). Redirects are
 * followed by hand, each checked (redirect-check.ts); once a URL on the internet has redirected, every
 * connection goes only to addresses on the internet, checked where the connection resolves its name.
 * The bytes are the file's own (`Accept-Encoding: identity`, nothing decoded): a `.tar.gz` served with
 * `Content-Encoding: gzip` was unpacked on the way and then refused as no archive.
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
  let response: IncomingMessage;
  for (let hops = 0; ; hops++) {
    // The URL the person approved goes where its name leads; after a redirect from the internet, only to the internet.
    response = await get(parsed, stop, hops > 0 && !startedInternal, signal);
    const status = response.statusCode ?? 0;
    const location = status >= 300 && status < 400 ? response.headers.location : undefined;
    if (location === undefined) break;
    response.destroy();
    if (hops >= MAX_REDIRECTS) throw remoteFailure(`${url.slice(0, 200)} redirects more than ${MAX_REDIRECTS} times`, { url: url.slice(0, 200) });
    let next: URL;
    try {
      next = new URL(location, parsed);
    } catch {
      throw skillError('DOWNLOAD_FAILED', `${parsed.href} redirects to '${location.slice(0, 200)}', which is not a URL`, { url: parsed.href });
    }
    checkRedirect(parsed, next, startedInternal);
    parsed = next;
  }
  const status = response.statusCode ?? 0;
  if (status < 200 || status >= 300) {
    response.destroy();
    throw remoteFailure(`${parsed.href} answered HTTP ${status}`, { url: parsed.href, status });
  }
  const declared = Number(response.headers['content-length'] ?? NaN);
  if (declared > maxBytes) {
    response.destroy();
    throw skillError('ARCHIVE_TOO_LARGE', `${parsed.href} is ${declared} bytes, more than the ${maxBytes} an archive may have`, { url: parsed.href, limit: maxBytes });
  }
  const chunks: Buffer[] = [];
  let received = 0;
  try {
    for await (const chunk of response) {
      received += (chunk as Buffer).length;
      if (received > maxBytes) {
        response.destroy();
        throw skillError('ARCHIVE_TOO_LARGE', `${parsed.href} sent more than the ${maxBytes} bytes an archive may have`, { url: parsed.href, limit: maxBytes });
      }
      chunks.push(chunk as Buffer);
    }
  } catch (error) {
    throw failed(error, parsed, signal);
  }
  return Buffer.concat(chunks);
}

/** One GET, answered with its response's head (the body still to read). */
function get(url: URL, stop: AbortSignal, internetOnly: boolean, asked: AbortSignal): Promise<IncomingMessage> {
  return new Promise<IncomingMessage>((resolve, reject) => {
    const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, {
      method: 'GET', signal: stop, headers: { 'accept-encoding': 'identity', 'user-agent': 'quire-skills' },
      ...(internetOnly ? { lookup: internetOnlyLookup } : {}),
    }, resolve);
    request.on('error', (error) => reject(failed(error, url, asked)));
    request.end();
  });
}

/** A failed download said as such: the caller's own stop as it is, a refusal of ours as it is, the rest naming the URL. */
function failed(error: unknown, url: URL, asked: AbortSignal): unknown {
  if (asked.aborted) return asked.reason ?? error;
  if ((error as { details?: { problem?: unknown } }).details?.problem !== undefined) return error;
  const timedOut = (error as Error).name === 'AbortError' || (error as Error).name === 'TimeoutError';
  const message = timedOut ? `no answer within ${DOWNLOAD_TIMEOUT_MS / 1000} s` : (error as Error).message;
  return remoteFailure(`${url.href} could not be downloaded: ${message}`, { url: url.href }, timedOut);
}
