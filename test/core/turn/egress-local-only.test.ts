import { describe, expect, it } from 'vitest';
import { WITHHELD_MARKER } from '../../../core/turn/egress-filter.js';
import { sse, useProviderKernel } from '../../plugins/providers/provider-harness.js';

/**
 * Issue 17, point 3: `egress: local-only` follows the data into model requests. The model server is the
 * real OpenAI SDK's loopback fake, which keeps every byte it receives; the marker word lives only in the
 * local-only notebook, so finding it in those bytes is a leak.
 */
const MARKER = 'zebraquartz';
const { start } = useProviderKernel();

type Kit = Awaited<ReturnType<typeof start>>;

async function notes(kit: Kit) {
  const { act } = kit;
  const secret = await act<{ id: string }>('notebook_create', { name: 'Health' });
  const open = await act<{ id: string }>('notebook_create', { name: 'Garden' });
  const secretDoc = await act<{ id: string }>('document_create', { notebook: secret.id, title: 'Visits', markdown: `garden visit notes ${MARKER}\n` });
  const openDoc = await act<{ id: string }>('document_create', { notebook: open.id, title: 'Beds', markdown: 'garden beds openword\n' });
  await act('notebook_set_privacy', { id: secret.id, egress: 'local-only' });
  return { secret, open, secretDoc, openDoc };
}

const bytesSent = (kit: Kit) => kit.fake.posts.map((post) => JSON.stringify(post.body)).join('\n');
const toolContents = (body: Record<string, unknown>) => (body.messages as { role: string; content: string }[]).filter((m) => m.role === 'tool').map((m) => m.content);

describe('local-only notebooks and a model server off this machine', () => {
  it('withholds a tool result holding their notes (a marker in its place, a withheld event), sends one that holds none, and sends it all again in later turns the same way', async () => {
    const kit = await start('openai-chat');
    const { secretDoc, openDoc } = await notes(kit);
    kit.fake.reply(
      sse('openai-chat', { calls: [{ id: 'call_search', name: 'search_fulltext', args: { query: 'garden' } }] }),
      sse('openai-chat', { calls: [{ id: 'call_open', name: 'document_get_markdown', args: { id: openDoc.id } }, { id: 'call_secret', name: 'document_get_markdown', args: { id: secretDoc.id } }] }),
      sse('openai-chat', { text: 'Done.' }),
      sse('openai-chat', { text: 'Again.' }),
    );
    const session = await kit.session();
    const first = await kit.turn(session, 'What is in my garden notes?');
    expect(first.events.at(-1)).toMatchObject({ event: 'done', data: { state: 'finished' } });
    expect(first.events.filter((event) => event.event === 'withheld').map((event) => event.data.count)).toEqual([1, 2]);
    const [, second, third] = kit.fake.posts;
    // The search found both notebooks: withheld whole. The open document went out, the secret one did not.
    expect(toolContents(second!.body)).toEqual([WITHHELD_MARKER]);
    const [searched, openText, secretText] = toolContents(third!.body);
    expect([searched, secretText]).toEqual([WITHHELD_MARKER, WITHHELD_MARKER]);
    expect(openText).toContain('openword');
    // The person still sees every result in the session.
    const stored = JSON.stringify(await kit.kernel.sessions.read(session));
    expect(stored).toContain(MARKER);
    await kit.turn(session, 'And again?');
    expect(kit.fake.posts).toHaveLength(4);
    expect(bytesSent(kit)).not.toContain(MARKER);
    // The next turn's history goes out the same way: stored results keep whose notes they hold.
    const later = toolContents(kit.fake.posts[3]!.body);
    expect([later[0], later[2]]).toEqual([WITHHELD_MARKER, WITHHELD_MARKER]);
    expect(later[1]).toContain('openword');
  });

  it('sends everything to a model server on this machine (model.local, a loopback baseURL): the rule, switched off by the provider, lets the marker through', async () => {
    const kit = await start('openai-chat', { model: { local: true } });
    const { secretDoc } = await notes(kit);
    kit.fake.reply(
      sse('openai-chat', { calls: [{ id: 'call_secret', name: 'document_get_markdown', args: { id: secretDoc.id } }] }),
      sse('openai-chat', { text: 'Done.' }),
    );
    const outcome = await kit.turn(await kit.session(), 'Read my visits');
    expect(outcome.events.some((event) => event.event === 'withheld')).toBe(false);
    expect(bytesSent(kit)).toContain(MARKER);
  });

  it('refuses model.local with a baseURL that does not name this machine', async () => {
    const kit = await start('openai-chat', { model: { local: true, baseURL: 'http://192.0.2.1:8080/v1' } });
    const outcome = await kit.turn(await kit.session(), 'hello');
    expect(outcome.body?.error.message).toContain('local is true, but baseURL (http://192.0.2.1:8080/v1) does not name this machine');
  });
});
