import { describe, expect, it } from 'vitest';
import type { Confirmation } from '../../../core/gate/confirmation.js';
import { ANSWER_WITHHELD_MARKER, WITHHELD_MARKER } from '../../../core/turn/egress-filter.js';
import { readEvents } from '../../helpers/sse-events.js';
import type { UserPlugin } from '../../helpers/harness.js';
import { sse, useProviderKernel } from '../../plugins/providers/provider-harness.js';
import { overflowBody } from '../../../fakes/wire-frames.js';

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

/** Runs a turn over HTTP/SSE; call confirmations are approved, release confirmations answered by `release`. */
async function turn(kit: Kit, sessionId: string, message: string, release: (confirmation: Confirmation) => { approved: boolean; always?: boolean }) {
  const response = await kit.http('POST', `/api/agent/sessions/${sessionId}/turns`, { message });
  expect(response.status).toBe(200);
  const answers: number[] = [];
  const events = await readEvents(response, async (event) => {
    if (event.event !== 'confirm') return;
    const confirmation = event.data.confirmation as Confirmation;
    const answer = confirmation.kind === 'release' ? release(confirmation) : { approved: true };
    const answered = await kit.http('POST', `/api/agent/sessions/${sessionId}/confirmations/${confirmation.id}/answer`, { ...answer, argsHash: confirmation.argsHash });
    answers.push(answered.status);
    if (answered.status !== 200) await kit.http('POST', `/api/agent/sessions/${sessionId}/confirmations/${confirmation.id}/answer`, { approved: answer.approved, argsHash: confirmation.argsHash });
  });
  const releases = events.filter((event) => event.event === 'confirm' && (event.data.confirmation as Confirmation).kind === 'release').map((event) => event.data.confirmation as Confirmation);
  return { events, releases, answers };
}

describe('local-only notebooks and a model server off this machine', () => {
  it('asks the person before a result holding their notes is sent, showing what would leave; declined, a marker goes in its place, now and in later turns', async () => {
    const kit = await start('openai-chat');
    const { secret, secretDoc, openDoc } = await notes(kit);
    kit.fake.reply(
      sse('openai-chat', { calls: [{ id: 'call_search', name: 'search_fulltext', args: { query: 'garden' } }] }),
      sse('openai-chat', { calls: [{ id: 'call_open', name: 'document_get_markdown', args: { id: openDoc.id } }, { id: 'call_secret', name: 'document_get_markdown', args: { id: secretDoc.id } }] }),
      sse('openai-chat', { text: 'Done.' }),
      sse('openai-chat', { text: 'Again.' }),
    );
    const session = await kit.session();
    // "always" is refused for a release (400); the helper then answers plainly.
    const first = await turn(kit, session, 'What is in my garden notes?', () => ({ approved: false, always: true }));
    expect(first.events.at(-1)).toMatchObject({ event: 'done', data: { state: 'finished' } });
    expect(first.answers).toEqual([400, 400]);
    expect(first.releases.map((c) => (c.arguments as { tool: string }).tool)).toEqual(['search_fulltext', 'document_get_markdown']);
    expect(first.releases[1]!.arguments).toMatchObject({ toolCallId: 'call_secret', to: 'openai-chat (fake-model)', notebooks: [{ id: secret.id, name: 'Health' }], text: expect.stringContaining(MARKER) });
    expect(first.releases[1]).toMatchObject({ effects: ['dataEgress'], status: 'pending' });
    expect(first.events.filter((event) => event.event === 'withheld').map((event) => event.data.count)).toEqual([1, 2]);
    const [, second, third] = kit.fake.posts;
    // The search found both notebooks: withheld whole. The open document went out, the secret one did not.
    expect(toolContents(second!.body)).toEqual([WITHHELD_MARKER]);
    const [searched, openText, secretText] = toolContents(third!.body);
    expect([searched, secretText]).toEqual([WITHHELD_MARKER, WITHHELD_MARKER]);
    expect(openText).toContain('openword');
    // The person still sees every result in the session.
    expect(JSON.stringify(await kit.kernel.sessions.read(session))).toContain(MARKER);
    // The next turn's history goes out the same way, without asking again.
    const again = await turn(kit, session, 'And again?', () => ({ approved: true }));
    expect(again.releases).toEqual([]);
    expect(kit.fake.posts).toHaveLength(4);
    expect(bytesSent(kit)).not.toContain(MARKER);
    const later = toolContents(kit.fake.posts[3]!.body);
    expect([later[0], later[2]]).toEqual([WITHHELD_MARKER, WITHHELD_MARKER]);
    expect(later[1]).toContain('openword');
  });

  it('withholds from a model off this machine, after a provider switch, the answers a model on it wrote from local-only notes: their text, their calls\' arguments; not the answers written before them', async () => {
    const local = await start('openai-chat', { model: { local: true } });
    const { secret, secretDoc, openDoc } = await notes(local);
    local.fake.reply(
      sse('openai-chat', { text: 'I will read them.', calls: [{ id: 'call_open', name: 'document_get_markdown', args: { id: openDoc.id } }] }),
      sse('openai-chat', { text: 'Now the other one.', calls: [{ id: 'call_secret', name: 'document_get_markdown', args: { id: secretDoc.id } }] }),
      // A to-do list repeats its arguments in its result, which holds no notes of its own.
      sse('openai-chat', { calls: [{ id: 'call_search', name: 'search_fulltext', args: { query: MARKER } }, { id: 'call_todo', name: 'todo_write', args: { todos: [{ content: `ask about ${MARKER}`, status: 'pending' }] } }] }),
      sse('openai-chat', { text: `Your visits mention ${MARKER}.` }),
    );
    const session = await local.session();
    const first = await local.turn(session, 'What do my notes say?');
    expect(first.events.at(-1)).toMatchObject({ event: 'done', data: { state: 'finished' } });
    const stored = (await local.kernel.sessions.read(session)).entries.filter((entry) => entry.type === 'assistant').map((entry) => entry.notebooks);
    expect(stored).toEqual([undefined, [expect.any(String)], expect.arrayContaining([secret.id]), expect.arrayContaining([secret.id])]);
    const root = local.kernel.workspace.root;
    await local.kernel.close();

    const remote = await start('openai-chat', { workspace: root, agent: { localOnlyResults: 'withhold' } });
    remote.fake.reply(sse('openai-chat', { text: 'Noted.' }));
    const next = await remote.turn(session, 'Polish that into an email');
    expect(next.events.at(-1)).toMatchObject({ event: 'done', data: { state: 'finished' } });
    expect(next.events.filter((event) => event.event === 'withheld').map((event) => event.data)).toEqual([{ type: 'withheld', count: 3, answers: 2, reason: 'local-only' }]);
    expect(bytesSent(remote)).not.toContain(MARKER);
    const messages = remote.fake.posts[0]!.body.messages as { role: string; content: string | null; tool_calls?: { function: { arguments: string } }[] }[];
    const answers = messages.filter((message) => message.role === 'assistant');
    // Written before the model had read the local-only document: sent as they were.
    expect(answers.slice(0, 2).map((message) => message.content)).toEqual(['I will read them.', 'Now the other one.']);
    expect(answers.slice(2).map((message) => message.content)).toEqual([ANSWER_WITHHELD_MARKER, ANSWER_WITHHELD_MARKER]);
    expect(answers[2]!.tool_calls!.map((call) => call.function.arguments)).toEqual(['{}', '{}']);
    const results = messages.filter((message) => message.role === 'tool').map((message) => message.content);
    expect(results.slice(2)).toEqual([WITHHELD_MARKER, WITHHELD_MARKER]);
    // The person still reads everything in Quire.
    expect(JSON.stringify(await remote.kernel.sessions.read(session))).toContain(`Your visits mention ${MARKER}.`);
  });

  it('never sends a model off this machine the summary a model on it wrote, even of the same protocol and model name', async () => {
    const local = await start('openai-chat', { model: { local: true, contextLimit: 100_000 } });
    const { secretDoc } = await notes(local);
    local.fake.reply(
      sse('openai-chat', { calls: [{ id: 'call_secret', name: 'document_get_markdown', args: { id: secretDoc.id } }] }),
      sse('openai-chat', { text: 'Read it.' }),
      { kind: 'json', status: 400, body: overflowBody('openai-chat') },
      sse('openai-chat', { text: `SUMMARY: the visits were about ${MARKER}` }),
      sse('openai-chat', { text: 'fits now' }),
    );
    const session = await local.session();
    await local.turn(session, 'Read my visits');
    expect((await local.turn(session, 'go on')).events.at(-1)).toMatchObject({ event: 'done', data: { state: 'finished' } });
    const root = local.kernel.workspace.root;
    await local.kernel.close();

    const remote = await start('openai-chat', { workspace: root, model: { contextLimit: 100_000 }, agent: { localOnlyResults: 'withhold' } });
    remote.fake.reply(sse('openai-chat', { text: 'Noted.' }));
    expect((await remote.turn(session, 'and now?')).events.at(-1)).toMatchObject({ event: 'done', data: { state: 'finished' } });
    expect(bytesSent(remote)).not.toContain(MARKER);
    expect(bytesSent(remote)).not.toContain('SUMMARY');
  });

  it('leaves a session with a model off this machine as it was: its answers and a failed lookup are not withheld once a notebook becomes local-only', async () => {
    const kit = await start('openai-chat');
    kit.fake.reply(
      sse('openai-chat', { calls: [{ id: 'call_missing', name: 'document_get_markdown', args: { id: '20260101000000-abcdefg' } }] }),
      sse('openai-chat', { text: 'There is no such document.' }),
      sse('openai-chat', { text: 'Still none.' }),
    );
    const session = await kit.session();
    await kit.turn(session, 'Read that document');
    const entries = (await kit.kernel.sessions.read(session)).entries.filter((entry) => entry.type === 'assistant');
    expect(entries.map((entry) => entry.notebooks)).toEqual([undefined, undefined]);
    expect(entries[0]!.toolCalls![0]!.notebooks).toEqual([]);
    await notes(kit);
    const next = await kit.turn(session, 'and now?');
    expect(next.events.some((event) => event.event === 'withheld')).toBe(false);
    const sent = JSON.stringify(kit.fake.posts[2]!.body);
    expect(sent).toContain('There is no such document.');
    expect(sent).toContain('NOT_FOUND');
  });

  it('weighs the history as it leaves: withheld results take a marker\'s room, not their own, in deciding to summarise', async () => {
    const kit = await start('openai-chat', { model: { contextLimit: 20_000 }, agent: { localOnlyResults: 'withhold' } });
    const { secretDoc } = await notes(kit);
    // About 9,000 tokens of the local-only notebook's text, read three times: past the budget if counted, far below as markers.
    const long = Array.from({ length: 600 }, (_, i) => `visit ${i} went well and the garden grew ${i % 7} rows`).join('. ');
    const [first] = (await kit.act<{ document: { children: { id: string }[] } }>('document_get', { id: secretDoc.id })).document.children;
    await kit.act('block_update', { id: first!.id, markdown: long });
    kit.fake.reply(
      sse('openai-chat', { calls: [1, 2, 3].map((n) => ({ id: `call_${n}`, name: 'document_get_markdown', args: { id: secretDoc.id } })) }),
      sse('openai-chat', { text: 'Read them.' }),
      sse('openai-chat', { text: 'Go on.' }),
    );
    const session = await kit.session();
    await kit.turn(session, 'Read my visits three times');
    expect((await kit.turn(session, 'and now?')).events.at(-1)).toMatchObject({ event: 'done', data: { state: 'finished' } });
    // No summary request: three rounds, three requests, none asking for a summary.
    expect(kit.fake.posts).toHaveLength(3);
    expect(kit.fake.posts.some((post) => JSON.stringify(post.body).includes('new_history_json'))).toBe(false);
  });

  it('previews the next request without calling the model: messages as they would leave, tokens, notebooks, what is withheld', async () => {
    const kit = await start('openai-chat');
    const { secret, open, secretDoc, openDoc } = await notes(kit);
    kit.fake.reply(
      sse('openai-chat', { calls: [{ id: 'call_open', name: 'document_get_markdown', args: { id: openDoc.id } }, { id: 'call_secret', name: 'document_get_markdown', args: { id: secretDoc.id } }] }),
      sse('openai-chat', { text: 'Done.' }),
    );
    const session = await kit.session();
    await turn(kit, session, 'Read both', () => ({ approved: false }));
    const posts = kit.fake.posts.length;
    const response = await kit.http('GET', `/api/agent/sessions/${session}/preview?message=${encodeURIComponent('and now?')}`);
    expect(response.status).toBe(200);
    const { preview } = await response.json() as { preview: { provider: { sendsDataAway: boolean }; messages: { role: string; content: string; tokens: number; withheld?: boolean; notebooks?: unknown }[]; tokens: { prompt: number }; notebooks: { ids: { id: string; name: string; localOnly: boolean }[]; unknown: boolean }; withheld: number } };
    expect(kit.fake.posts).toHaveLength(posts);
    expect(JSON.stringify(preview)).not.toContain(MARKER);
    expect(preview.provider.sendsDataAway).toBe(true);
    expect(preview.withheld).toBe(1);
    expect(preview.notebooks).toEqual({ ids: [{ id: open.id, name: 'Garden', localOnly: false }], unknown: false });
    const tools = preview.messages.filter((message) => message.role === 'tool');
    expect(tools.map((message) => [message.withheld === true, message.notebooks])).toEqual([[false, [open.id]], [true, [secret.id]]]);
    expect(preview.messages.at(-1)).toMatchObject({ role: 'user', content: 'and now?' });
    expect(preview.tokens.prompt).toBe(preview.messages.reduce((sum, message) => sum + message.tokens, 0) + 3 + (preview as unknown as { tools: { tokens: number }[] }).tools.reduce((sum, tool) => sum + tool.tokens, 0));
  });

  it('sends compaction\'s summary requests without the withheld results too', async () => {
    const kit = await start('openai-chat', { model: { contextLimit: 100_000 } });
    const { secretDoc } = await notes(kit);
    kit.fake.reply(
      sse('openai-chat', { calls: [{ id: 'call_secret', name: 'document_get_markdown', args: { id: secretDoc.id } }] }),
      sse('openai-chat', { text: 'Read it.' }),
      // The next turn: the server says the context overflowed, so the history is summarised first.
      { kind: 'json', status: 400, body: overflowBody('openai-chat') },
      sse('openai-chat', { text: 'SUMMARY OF EARLIER WORK' }),
      sse('openai-chat', { text: 'fits now' }),
    );
    const session = await kit.session();
    await turn(kit, session, 'Read my visits', () => ({ approved: false }));
    const next = await turn(kit, session, 'go on', () => ({ approved: false }));
    expect(next.events.at(-1)).toMatchObject({ event: 'done', data: { state: 'finished' } });
    expect(kit.fake.posts).toHaveLength(5);
    expect(JSON.stringify(kit.fake.posts[3]!.body)).toContain('new_history_json');
    expect(bytesSent(kit)).not.toContain(MARKER);
  });

  it('sends a result the person released, now and in later turns', async () => {
    const kit = await start('openai-chat');
    const { secretDoc } = await notes(kit);
    kit.fake.reply(
      sse('openai-chat', { calls: [{ id: 'call_secret', name: 'document_get_markdown', args: { id: secretDoc.id } }] }),
      sse('openai-chat', { text: 'Done.' }),
      sse('openai-chat', { text: 'Again.' }),
    );
    const session = await kit.session();
    const first = await turn(kit, session, 'Read my visits', () => ({ approved: true }));
    expect(first.releases).toHaveLength(1);
    expect(toolContents(kit.fake.posts[1]!.body)[0]).toContain(MARKER);
    await turn(kit, session, 'Again', () => ({ approved: false }));
    expect(toolContents(kit.fake.posts[2]!.body)[0]).toContain(MARKER);
  });

  it('withholds without asking when agent.localOnlyResults is withhold', async () => {
    const kit = await start('openai-chat', { agent: { localOnlyResults: 'withhold' } });
    const { secretDoc } = await notes(kit);
    kit.fake.reply(
      sse('openai-chat', { calls: [{ id: 'call_secret', name: 'document_get_markdown', args: { id: secretDoc.id } }] }),
      sse('openai-chat', { text: 'Done.' }),
    );
    const outcome = await turn(kit, await kit.session(), 'Read my visits', () => ({ approved: true }));
    expect(outcome.releases).toEqual([]);
    expect(outcome.events.filter((event) => event.event === 'withheld')).toHaveLength(1);
    expect(bytesSent(kit)).not.toContain(MARKER);
  });

  it('withholds an SQL error that quotes local-only notes (SQLite puts values into messages), as it would the result', async () => {
    const kit = await start('openai-chat', { agent: { localOnlyResults: 'withhold' } });
    await notes(kit);
    const sql = "select json_extract('{}', (select group_concat(content, ' | ') from blocks))";
    kit.fake.reply(sse('openai-chat', { calls: [{ id: 'call_sql', name: 'sql_query', args: { sql } }] }), sse('openai-chat', { text: 'Done.' }));
    const outcome = await turn(kit, await kit.session(), 'Query my notes', () => ({ approved: true }));
    expect(outcome.events.filter((event) => event.event === 'withheld')).toHaveLength(1);
    expect(bytesSent(kit)).not.toContain(MARKER);
    // Over HTTP, to the person, the message is cut to a bound (it carried a whole table of text).
    const long = await kit.http('POST', '/api/actions/sql/sql/query', { sql: "select json_extract('{}', printf('%.*c', 600000, 'x'))" });
    const body = (await long.json()) as { error: { message: string } };
    expect([long.status, body.error.message.length < 1_100, body.error.message]).toEqual([400, true, expect.stringContaining('(cut at 1000 characters)')]);
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

  it('asks before a call that sends data away once the model has seen local-only notes, whatever grant; not before', async () => {
    const sender: UserPlugin = {
      manifest: {
        id: 'sender', version: '0.1.0', kernel: '^0.1.0', description: 'posts a text elsewhere', entry: 'index.js',
        tools: [{ name: 'post', description: 'Post a text', actions: { send: { description: 'Send a text to a server', input: { type: 'object', properties: { text: { type: 'string' } }, additionalProperties: false }, effects: ['dataEgress'] } } }],
      },
      code: 'export default { activate() { return { post: { send: async () => ({ sent: true }) } }; } };',
    };
    const kit = await start('openai-chat', { model: { local: true }, userPlugins: { sender }, kernelPlugins: { sender: { trusted: true } } });
    const { secretDoc, openDoc } = await notes(kit);
    await kit.kernel.grants.add({ plugin: 'sender', tool: 'post', action: 'send', effects: ['dataEgress'], createdBy: 'person:test' });
    kit.fake.reply(
      sse('openai-chat', { calls: [{ id: 'call_open', name: 'document_get_markdown', args: { id: openDoc.id } }] }),
      sse('openai-chat', { calls: [{ id: 'call_send1', name: 'post_send', args: { text: 'beds' } }] }),
      sse('openai-chat', { calls: [{ id: 'call_secret', name: 'document_get_markdown', args: { id: secretDoc.id } }] }),
      sse('openai-chat', { calls: [{ id: 'call_send2', name: 'post_send', args: { text: 'visits' } }] }),
      sse('openai-chat', { text: 'Done.' }),
    );
    const outcome = await turn(kit, await kit.session(), 'Share my notes', () => ({ approved: true }));
    const asked = outcome.events.filter((event) => event.event === 'confirm').map((event) => event.data.confirmation as Confirmation);
    // The grant let the first send through; after the local-only document reached the (local) model, the second is asked, saying why.
    expect(asked.map((c) => [c.wireName, (c.arguments as { text?: string }).text])).toEqual([['post_send', 'visits']]);
    expect(asked[0]!.note).toContain('local-only');
  });

  it('asks before the agent moves notes out of a local-only notebook, whatever grant or mode, saying why', async () => {
    const kit = await start('openai-chat');
    const { open, secretDoc } = await notes(kit);
    await kit.kernel.grants.add({ plugin: 'blocks', tool: 'document', action: 'move', effects: ['localWrite'], createdBy: 'person:test' });
    const outcome = await kit.kernel.pipeline.call({ target: 'document_move', input: { id: secretDoc.id, notebook: open.id }, principal: { kind: 'agent', name: 'agent:s/t/c', role: 'admin', sessionId: 's', turnId: 't' }, sessionMode: 'auto' });
    expect(outcome.status).toBe('confirmation_required');
    if (outcome.status === 'confirmation_required') expect(outcome.confirmation.note).toContain('local-only');
  });

  it('asks before the agent exports a local-only notebook (an import could bring the files into another), and refuses an MCP client\'s move or export out of one', async () => {
    const kit = await start('openai-chat');
    const { secret, open, secretDoc, openDoc } = await notes(kit);
    const agent = { kind: 'agent' as const, name: 'agent:s/t/c', role: 'admin' as const, sessionId: 's', turnId: 't' };
    const folder = `${kit.kernel.workspace.root}-export`;
    const exported = await kit.kernel.pipeline.call({ target: 'export_markdown', input: { id: secret.id, folder }, principal: agent, sessionMode: 'auto' });
    expect(exported.status).toBe('confirmation_required');
    if (exported.status === 'confirmation_required') expect(exported.confirmation.note).toContain('out of the workspace');
    // The open notebook's export is no crossing.
    expect((await kit.kernel.pipeline.call({ target: 'export_markdown', input: { id: open.id, folder: `${folder}-open` }, principal: agent, sessionMode: 'auto' })).status).toBe('ok');
    // An MCP client cannot be asked: its reads of the notebook were withheld, and a move out of it let it read the text whole.
    const mcp = { kind: 'mcp' as const, name: 'alice', role: 'admin' as const, client: 'test' };
    for (const [target, input] of [['document_move', { id: secretDoc.id, notebook: open.id }], ['export_markdown', { id: secret.id, folder }]] as const) {
      const refused = await kit.kernel.pipeline.call({ target, input, principal: mcp }).catch((error: { code: string; details: { reason?: string } }) => error);
      expect(refused).toMatchObject({ code: 'ACTION_DENIED', details: { reason: 'local_only_crossing' } });
    }
    expect((await kit.act<{ notebook: string }>('document_info', { id: secretDoc.id })).notebook).toBe(secret.id);
    // Within one notebook, and within the open one, an MCP client writes as before.
    expect((await kit.kernel.pipeline.call({ target: 'block_append', input: { parentId: openDoc.id, markdown: 'from the client' }, principal: mcp })).status).toBe('ok');
  });

  it('refuses the agent and MCP clients a history version written in a local-only notebook put back where it is not local-only', async () => {
    const kit = await start('openai-chat');
    const { open, secretDoc } = await notes(kit);
    await kit.act('block_append', { parentId: secretDoc.id, markdown: 'a later line' });
    const [version] = (await kit.act<{ versions: { version: string; notebook: string }[] }>('history_list', { id: secretDoc.id })).versions;
    // The person moves the document out; the version still holds the text written while it was local-only.
    await kit.act('document_move', { id: secretDoc.id, notebook: open.id });
    for (const principal of [{ kind: 'agent' as const, name: 'agent:s/t/c', role: 'admin' as const, sessionId: 's', turnId: 't' }, { kind: 'mcp' as const, name: 'alice', role: 'admin' as const, client: 'test' }]) {
      const refused = await kit.kernel.pipeline.call({ target: 'history_rollback', input: { id: secretDoc.id, version: version!.version }, principal, sessionMode: 'auto' })
        .catch((error: { code: string; details: { reason?: string } }) => error);
      expect(refused).toMatchObject({ code: 'ACTION_DENIED', details: { reason: 'local_only_crossing' } });
    }
    // The person may.
    await kit.act('history_rollback', { id: secretDoc.id, version: version!.version });
  });

  it('refuses model.local with a baseURL that does not name this machine', async () => {
    const kit = await start('openai-chat', { model: { local: true, baseURL: 'http://192.0.2.1:8080/v1' } });
    const outcome = await kit.turn(await kit.session(), 'hello');
    expect(outcome.body?.error.message).toContain('local is true, but baseURL (http://192.0.2.1:8080/v1) does not name this machine');
    // The model cannot be used, as with a missing key (it was 500, the kernel's fault).
    expect([outcome.status, outcome.body?.error.code]).toEqual([503, 'MODEL_UNAVAILABLE']);
  });
});
