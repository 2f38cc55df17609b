import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { caught, REPO_ROOT, useHarness } from './helpers/harness.js';

/** The README's plugin example, taken from the README itself so the two cannot drift apart. */
function readmeExample(): { manifest: Record<string, unknown>; code: string } {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const block = (marker: string): string => {
    const match = new RegExp(`<!-- example:${marker} -->\\s*\`\`\`\\w+\\n([\\s\\S]*?)\`\`\``).exec(readme);
    if (!match?.[1]) throw new Error(`README has no example:${marker} block`);
    return match[1];
  };
  return { manifest: JSON.parse(block('manifest')) as Record<string, unknown>, code: block('entry') };
}

const admin = { kind: 'person', name: 'admin', role: 'admin' } as const;
const agent = { kind: 'agent', name: 'agent:s/t/c', role: 'admin' } as const;

describe('the README plugin example', () => {
  const harness = useHarness();
  let server: Server | undefined;
  afterEach(async () => {
    if (server) await new Promise((resolve) => server?.close(resolve));
  });

  it('loads as a user plugin, counts words, and fetches a title only because it declares egress', async () => {
    const kernel = await harness.boot({ realManifests: true, userPlugins: { 'word-count': { ...readmeExample() } } });
    const counted = await kernel.pipeline.call({ target: 'text_count_words', input: { text: 'two words' }, principal: admin });
    expect(counted.status === 'ok' && counted.value).toEqual({ words: 2, characters: 9 });

    server = createServer((_request, response) => response.end('<html><title> Loopback page </title></html>'));
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const fetched = await kernel.pipeline.call({ target: 'text_fetch_title', input: { url }, principal: admin });
    expect(fetched.status === 'ok' && fetched.value).toEqual({ title: 'Loopback page' });
    const asked = await kernel.pipeline.call({ target: 'text_fetch_title', input: { url }, principal: agent });
    expect(asked.status === 'confirmation_required' && asked.confirmation.effects).toEqual(['dataEgress']);
    expect((await caught(kernel.pipeline.call({ target: 'text_fetch_title', input: { url: 'file:///etc/passwd' }, principal: admin }))).code).toBe('INVALID_INPUT');
  });
});
