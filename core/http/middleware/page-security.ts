import { createHash } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { secureHeaders } from 'hono/secure-headers';

/**
 * The headers of every page the kernel serves (the API reference, the web app): scripts and styles
 * from the kernel itself only, no plugins, frames, or other sites; connections back to the kernel
 * only. Note text shown in a page can therefore never load or run a script. An inline script a page
 * needs is allowed by its hash, never by 'unsafe-inline'.
 */
export function pageSecurity(inlineScriptHashes: readonly string[] = []): MiddlewareHandler {
  return secureHeaders({
    contentSecurityPolicy: {
      defaultSrc: ["'none'"],
      scriptSrc: ["'self'", ...inlineScriptHashes.map((hash) => `'${hash}'`)],
      // Swagger UI and most component libraries set style attributes; styles cannot run code.
      styleSrc: ["'self'", "'unsafe-inline'"],
      // blob: for the notes' images, fetched with the token and shown from memory.
      imgSrc: ["'self'", 'data:', 'blob:'],
      fontSrc: ["'self'"],
      connectSrc: ["'self'"],
      manifestSrc: ["'self'"],
      baseUri: ["'none'"],
      formAction: ["'self'"],
      frameAncestors: ["'none'"],
      objectSrc: ["'none'"],
    },
    referrerPolicy: 'no-referrer',
    xFrameOptions: 'DENY',
    crossOriginResourcePolicy: 'same-origin',
    crossOriginOpenerPolicy: 'same-origin',
    // Not sent: the kernel serves plain HTTP on loopback, and behind a TLS proxy on a real host name this
    // header (with includeSubDomains) would pin every sub-domain to HTTPS for 180 days: the proxy's to decide.
    strictTransportSecurity: false,
  });
}

/** The CSP source of each inline `<script>` (without `src`) of a page, for pageSecurity. */
export function inlineScriptHashes(html: string): string[] {
  return [...html.matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/g)]
    .map((match) => `sha256-${createHash('sha256').update(match[1]!).digest('base64')}`);
}
