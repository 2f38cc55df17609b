import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ADMIN, useWebApp } from './web-harness.js';

const { start } = useWebApp();

/** A page of another origin: a second loopback server whose only page is empty. */
async function otherOrigin(): Promise<{ origin: string; server: Server }> {
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>another site</title>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

interface PageAnswer { status?: number; body?: unknown; session?: string | null; failed?: string }

describe('a page of a configured origin calls the API and /mcp from a real browser (CORS)', () => {
  const pages: Server[] = [];
  afterEach(async () => {
    for (const server of pages.splice(0)) await new Promise((resolve) => server.close(resolve));
  });

  it('reads answers and errors and an MCP session id; a page of an origin not configured reads nothing', async () => {
    const allowed = await otherOrigin();
    const stranger = await otherOrigin();
    pages.push(allowed.server, stranger.server);
    const web = await start({ config: { server: { allowedOrigins: [allowed.origin] } } });

    // Every call carries the token and JSON, so the browser asks first (a preflight without the token).
    const call = (path: string, body: unknown, headers: Record<string, string> = {}) => web.page.evaluate(async ({ url, token, payload, extra }) => {
      try {
        const response = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...extra }, body: JSON.stringify(payload) });
        const text = await response.text();
        let body: unknown = text;
        try { body = JSON.parse(text); } catch { /* an event stream stays text */ }
        return { status: response.status, body, session: response.headers.get('mcp-session-id') } satisfies PageAnswer;
      } catch (error) {
        return { failed: String(error) } satisfies PageAnswer;
      }
    }, { url: `${web.url}${path}`, token: ADMIN, payload: body, extra: headers });

    await web.page.goto(`${allowed.origin}/`);
    const list = await call('/api/actions/blocks/notebook/list', {});
    expect(list.failed).toBeUndefined();
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ result: expect.any(Object) });
    // An error is read too, with what was wrong.
    const bad = await call('/api/actions/blocks/document/get', { id: 42 });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: { code: 'INVALID_INPUT' } });
    // MCP's session id is a header the page must be let to read.
    const initialize = await call('/mcp', { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'page', version: '1' } } }, { accept: 'application/json, text/event-stream' });
    expect(initialize.failed).toBeUndefined();
    expect(initialize.status).toBe(200);
    expect(initialize.session).toMatch(/\S/);

    // A refused token is read too, with why (its challenge header), not a network error.
    const anonymous = await web.page.evaluate(async (url) => {
      const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      return { status: response.status, challenge: response.headers.get('www-authenticate'), code: ((await response.json()) as { error: { code: string } }).error.code };
    }, `${web.url}/api/actions/blocks/notebook/list`);
    expect(anonymous).toEqual({ status: 401, challenge: 'Bearer realm="quire"', code: 'UNAUTHENTICATED' });

    // Answers vary by Origin now, and a route's own Vary stays (the app's pages are gzipped by Accept-Encoding).
    const page = await fetch(`${web.url}/`, { headers: { 'accept-encoding': 'gzip' } });
    expect(page.headers.get('vary')).toBe('accept-encoding, Origin');

    await web.page.goto(`${stranger.origin}/`);
    const refused = await call('/api/actions/blocks/notebook/list', {});
    expect(refused.failed).toMatch(/Failed to fetch/);
  });
});
