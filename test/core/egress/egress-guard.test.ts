import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Principal } from '../../../core/plugin-api.js';
import { caught, useHarness } from '../../helpers/harness.js';

const admin: Principal = { kind: 'person', name: 'admin', role: 'admin' };

describe('egress guard', () => {
  const harness = useHarness();
  let server: Server;
  let url: string;
  let received: number;

  beforeEach(async () => {
    received = 0;
    server = createServer((_request, response) => {
      received += 1;
      response.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/data?secret=1`;
  });
  afterEach(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it.each(['net_fetch_quiet', 'net_http_quiet', 'net_client_request_quiet', 'net_https_quiet'])('refuses a request from %s, which does not declare dataEgress, and audits it', async (action) => {
    const kernel = await harness.boot({ plugins: ['egress'] });
    const error = await caught(kernel.pipeline.call({ target: action, input: { url }, principal: admin }));
    expect(error.code).toBe('EGRESS_DENIED');
    expect(error.message).toContain('egress');
    expect(error.message).toContain('dataEgress');
    expect(received).toBe(0);
    const lines = (await readFile(kernel.audit.logFile, 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ plugin: 'egress', tool: 'net', outcome: 'egress_denied', errorCode: 'EGRESS_DENIED' });
    // Only the origin is recorded: the path and query could carry the data.
    expect(String((lines[0]?.details as { target: string }).target)).not.toContain('secret');
  });

  it('refuses a raw socket connection and a DNS lookup from an action without dataEgress', async () => {
    const kernel = await harness.boot({ plugins: ['egress'] });
    expect((await caught(kernel.pipeline.call({ target: 'net_socket_quiet', input: { url }, principal: admin }))).code).toBe('EGRESS_DENIED');
    expect((await caught(kernel.pipeline.call({ target: 'net_dns_quiet', input: { url: 'http://localhost/' }, principal: admin }))).code).toBe('EGRESS_DENIED');
    expect(received).toBe(0);
    const lines = (await readFile(kernel.audit.logFile, 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as { details: { target: string } });
    expect(lines.map((line) => line.details.target)).toEqual([`tcp://127.0.0.1:${new URL(url).port}`, 'dns:localhost']);
  });

  it.each(['resolver_txt', 'callback_resolver_a', 'resolver_reverse', 'resolver_ptr', 'module_soa', 'lookup_service'])('refuses a DNS query of any kind from an action without dataEgress (%s)', async (kind) => {
    const kernel = await harness.boot({ plugins: ['egress'] });
    expect((await caught(kernel.pipeline.call({ target: 'net_dns_other_quiet', input: { kind }, principal: admin }))).code).toBe('EGRESS_DENIED');
  });

  it('audits a refusal even when the handler swallows the error', async () => {
    const kernel = await harness.boot({ plugins: ['egress'] });
    const outcome = await kernel.pipeline.call({ target: 'net_swallow_quiet', input: { url }, principal: admin });
    expect(outcome.status === 'ok' && outcome.value).toEqual({ swallowed: true });
    expect(received).toBe(0);
    const lines = (await readFile(kernel.audit.logFile, 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toEqual([expect.objectContaining({ action: 'swallow_quiet', outcome: 'egress_denied' })]);
  });

  it('lets an action that declares dataEgress send its request', async () => {
    const kernel = await harness.boot({ plugins: ['egress'] });
    const outcome = await kernel.pipeline.call({ target: 'net_fetch_declared', input: { url }, principal: admin });
    expect(outcome.status === 'ok' && outcome.value).toEqual({ status: 200 });
    expect(received).toBe(1);
  });

  it('leaves requests made outside any action alone', async () => {
    await harness.boot({ plugins: ['egress'] });
    expect((await fetch(url)).status).toBe(200);
    expect(received).toBe(1);
  });
});
