import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newId } from '../../core/ids.js';
import { framesFor } from '../../fakes/wire-frames.js';
import { ADMIN, round, useWebApp } from './web-harness.js';
import { notes, type Created } from './web-notes.js';

const { start } = useWebApp();
/** A real 1×1 PNG. */
const DOT_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

/**
 * Installed before the app loads: the stream of a turn started from the page breaks after its first
 * chunk (a network change, a sleeping laptop), while the kernel's turn goes on.
 */
const BREAK_TURN_STREAMS = `(() => {
  const original = window.fetch.bind(window);
  window.fetch = async (input, init) => {
    const response = await original(input, init);
    const url = typeof input === 'string' ? input : input.url;
    if (!(init?.method === 'POST' && /\\/api\\/agent\\/sessions\\/[^/]+\\/turns$/.test(new URL(url, location.href).pathname))) return response;
    const reader = response.body.getReader();
    let chunks = 0;
    const body = new ReadableStream({
      async pull(controller) {
        if (chunks++ >= 1) { void reader.cancel(); controller.error(new TypeError('network error')); return; }
        const { done, value } = await reader.read();
        if (done) controller.close(); else controller.enqueue(value);
      },
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };
})();`;

describe('the web app in a real browser: a broken stream, a stale card, an edited image', () => {
  it('follows a turn whose stream broke: its confirmation appears, is answered, and its answer shows', async () => {
    const web = await start();
    const { paragraph } = await notes(web);
    await web.page.addInitScript(BREAK_TURN_STREAMS);
    // The session's reads while the page follows the turn: from the turn on, not the whole session each time.
    const reads: URL[] = [];
    web.page.on('request', (sent) => {
      const url = new URL(sent.url());
      if (sent.method() === 'GET' && /^\/api\/agent\/sessions\/[^/]+$/.test(url.pathname)) reads.push(url);
    });
    // Four messages before the turn: the reads while following start at the turn's, the fifth.
    const id = newId();
    await web.kernel.sessions.save({ id, title: 'Earlier', entries: ['u0', 'a1', 'u2', 'a3'].map((key) => ({ id: key, type: key[0] === 'u' ? 'user' : 'assistant', content: `message ${key}` })) });
    await web.signIn(ADMIN);
    await web.page.goto(`${web.url}/#/agent/${id}`);
    await web.page.getByText('message a3').waitFor();
    // The model's first frame comes after a pause, so that the stream breaks before the confirmation is announced.
    web.fake.reply(
      { kind: 'sse', frames: framesFor('openai-chat', { calls: [{ id: 'call_1', name: 'block_update', args: { id: paragraph, markdown: 'Edited after the stream broke.' } }] }), frameDelayMs: 300 },
      round({ text: 'Changed, though you lost sight of me.' }),
    );
    await web.page.getByLabel('Message to the agent').fill('Edit the paragraph');
    await web.page.getByRole('button', { name: 'Send' }).click();
    await web.page.getByText('The connection to the turn was lost').waitFor();
    // Stop is offered, not Send: the turn still runs.
    await web.page.getByRole('button', { name: 'Stop' }).waitFor();
    const card = web.page.locator('section.confirm');
    await card.waitFor();
    expect(await card.innerText()).toContain('block_update');
    // The card may come from the page's own pending read, before the follow loop's first session read.
    await expect.poll(() => reads.filter((url) => url.searchParams.has('entriesFrom')).length).toBeGreaterThan(0);
    const followed = reads.filter((url) => url.searchParams.has('entriesFrom'));
    expect(followed.every((url) => url.searchParams.get('entriesFrom') === '4' && /^\d+$/.test(url.searchParams.get('revision') ?? ''))).toBe(true);
    await card.getByRole('button', { name: 'Approve' }).click();
    await web.page.locator('.entry.assistant .content', { hasText: 'Changed, though you lost sight of me.' }).waitFor();
    expect((await web.act<{ markdown: string }>('block_get', { id: paragraph })).markdown.trim()).toBe('Edited after the stream broke.');
    await web.page.getByRole('button', { name: 'Send' }).waitFor();
    await web.page.getByText('message u0').waitFor();
    // Once only: the stored answer replaced the live one.
    expect(await web.page.locator('.entry.assistant .content', { hasText: 'Changed, though you lost sight of me.' }).count()).toBe(1);
  });

  it('shows a denied call as failed once the turn is stored, the person\'s message while its turn runs, and no Undo for a turn undone whole', async () => {
    const web = await start();
    const { paragraph } = await notes(web);
    await web.signIn(ADMIN);
    await web.page.getByRole('link', { name: 'Agent' }).click();
    await web.page.getByRole('button', { name: 'New session' }).click();
    await web.page.locator('.chat h1').waitFor();
    web.fake.reply(round({ calls: [{ id: 'call_1', name: 'block_update', args: { id: paragraph, markdown: 'Denied edit.' } }] }), round({ text: 'I was not allowed.' }));
    await web.page.getByLabel('Message to the agent').fill('Edit the paragraph');
    await web.page.getByRole('button', { name: 'Send' }).click();
    await web.page.locator('section.confirm').getByRole('button', { name: 'Deny' }).click();
    // The stored answer, not the live one: the turn's end is handled by then (its late clearing of the
    // live view wiped the next turn's shown message).
    await web.page.locator('li.entry.assistant:not(.live) .content', { hasText: 'I was not allowed.' }).waitFor();
    // The stored entry: it read 'done' (its state is 'finished'; its ok is false).
    expect(await web.page.locator('.entry .tool-call summary').first().innerText()).toContain('failed');
    // A turn that wrote: undone once, the button goes (pressed again, it took back the person's later edit).
    web.fake.reply(round({ calls: [{ id: 'call_2', name: 'block_update', args: { id: paragraph, markdown: 'Agent edit.' } }] }), round({ text: 'Edited.' }));
    await web.page.getByLabel('Message to the agent').fill('Edit it now');
    await web.page.getByRole('button', { name: 'Send' }).click();
    // While the turn waits for the person, the message it answers is shown (it appeared only once the turn ended).
    await web.page.locator('section.confirm').waitFor();
    expect(await web.page.locator('.entry.user', { hasText: 'Edit it now' }).count()).toBe(1);
    // The session read at the turn's end held back: until it is shown, neither Undo (it named the turn
    // before, and undid that one) nor Send (the late end wiped the next message from view) is offered.
    const sessionId = decodeURIComponent(new URL(web.page.url()).hash.split('/')[2]!);
    const slowRead = (url: URL): boolean => url.pathname === `/api/agent/sessions/${sessionId}`;
    // Held until the test has looked (a fixed delay could pass first on a loaded machine).
    let letGo!: () => void;
    const held = new Promise<void>((resolve) => { letGo = resolve; });
    await web.page.route(slowRead, async (route) => { await held; await route.continue(); });
    await web.page.locator('section.confirm').getByRole('button', { name: 'Approve' }).click();
    await web.page.locator('li.entry.assistant.live .content', { hasText: 'Edited.' }).waitFor();
    await web.page.getByRole('button', { name: 'Send' }).waitFor();
    expect([await web.page.getByRole('button', { name: 'Undo last turn' }).count(), await web.page.getByRole('button', { name: 'Send' }).isDisabled()]).toEqual([0, true]);
    letGo();
    await web.page.locator('li.entry.assistant:not(.live) .content', { hasText: 'Edited.' }).waitFor();
    await web.page.unroute(slowRead);
    expect(await web.page.locator('.entry.user', { hasText: 'Edit it now' }).count()).toBe(1);
    await web.page.getByRole('button', { name: 'Undo last turn' }).click();
    await web.page.getByText('A turn was undone.').waitFor();
    await web.page.getByRole('button', { name: 'Send' }).waitFor();
    expect(await web.page.getByRole('button', { name: 'Undo last turn' }).count()).toBe(0);
  });

  it('gives an opened editor the cursor, keeps the page on the skip link, sends nothing on an IME\'s Enter, and answers a question only once chosen', async () => {
    const web = await start();
    const { plans, paragraph } = await notes(web);
    await web.signIn(ADMIN);
    await web.page.goto(`${web.url}/#/doc/${plans}`);
    await web.page.locator(`[data-block="${paragraph}"] button.edit`).click();
    // The cursor goes to the editor (the sign-in field had used up autofocus, and the keys went nowhere).
    await web.page.waitForFunction((id) => document.activeElement?.id === id, `edit-${paragraph}`, { timeout: 5000 });
    await web.page.keyboard.type('XYZ');
    expect(await web.page.locator(`#edit-${paragraph}`).inputValue()).toContain('XYZ');
    await web.page.getByRole('button', { name: 'Cancel' }).click();
    // The skip link moves to the content; followed as a link, the router took #main for the home page.
    await web.page.locator('a.skip').focus();
    await web.page.keyboard.press('Enter');
    expect(new URL(web.page.url()).hash).toBe(`#/doc/${plans}`);
    expect(await web.page.evaluate(() => document.activeElement?.id)).toBe('main');
    // An Enter that commits an input method's candidate is not a send.
    await web.page.getByRole('link', { name: 'Agent' }).click();
    await web.page.getByRole('button', { name: 'New session' }).click();
    await web.page.locator('.chat h1').waitFor();
    const box = web.page.getByLabel('Message to the agent');
    await box.fill('请帮我 wo de');
    const posts = web.fake.posts.length;
    await box.dispatchEvent('keydown', { key: 'Enter', isComposing: true, bubbles: true, cancelable: true });
    await web.page.waitForTimeout(300);
    expect([web.fake.posts.length, await box.inputValue()]).toEqual([posts, '请帮我 wo de']);
    // A question's Answer waits for a choice (an empty answer reached the model as 'User provided no answer.').
    web.fake.reply(round({ calls: [{ id: 'call_q', name: 'question', args: { questions: [{ question: 'Which colour?', options: [{ label: 'Blue' }, { label: 'Green' }] }] } }] }), round({ text: 'Blue it is.' }));
    await box.fill('Pick a colour with me');
    await web.page.getByRole('button', { name: 'Send' }).click();
    await web.page.locator('form.question legend', { hasText: 'Which colour?' }).waitFor();
    expect(await web.page.getByRole('button', { name: 'Answer' }).isDisabled()).toBe(true);
    await web.page.getByLabel('Blue').check();
    await web.page.getByRole('button', { name: 'Answer' }).click();
    await web.page.locator('.entry.assistant .content', { hasText: 'Blue it is.' }).waitFor();
  });

  it('keeps what was typed in a block\'s editor when the page is left, and gives it back when the block is edited again', async () => {
    const web = await start();
    const { plans, paragraph, work } = await notes(web);
    const other = await web.act<Created>('document_create', { notebook: work, title: 'Elsewhere', markdown: 'another page' });
    await web.signIn(ADMIN);
    await web.page.goto(`${web.url}/#/doc/${plans}`);
    await web.page.locator(`[data-block="${paragraph}"] button.edit`).click();
    await web.page.locator(`#edit-${paragraph}`).fill('Typed, then I went elsewhere.');
    // Another document, then back: the editor was closed and the text gone.
    await web.page.evaluate((id) => { location.hash = `#/doc/${id}`; }, other.id);
    await web.page.getByRole('heading', { name: 'Elsewhere', level: 1 }).waitFor();
    await web.page.goBack();
    await web.page.locator(`[data-block="${paragraph}"] button.edit`).click();
    expect(await web.page.locator(`#edit-${paragraph}`).inputValue()).toBe('Typed, then I went elsewhere.');
    await web.page.getByText('Your unsaved text from before is back').waitFor();
    // Cancel drops it.
    await web.page.getByRole('button', { name: 'Cancel' }).click();
    await web.page.locator(`[data-block="${paragraph}"] button.edit`).click();
    expect(await web.page.locator(`#edit-${paragraph}`).inputValue()).not.toContain('went elsewhere');
  });

  it('settles a confirmation answered elsewhere, saying so, instead of refusing every click', async () => {
    const web = await start();
    const { paragraph } = await notes(web);
    await web.signIn(ADMIN);
    // The model's next answer never comes: the turn runs on, and the card the stream announced stays shown.
    web.fake.reply(
      round({ calls: [{ id: 'call_1', name: 'block_delete', args: { id: paragraph } }] }),
      { kind: 'sse', frames: framesFor('openai-chat', { text: 'Left it, as told.' }), stallAfter: 1 },
    );
    await web.page.getByRole('link', { name: 'Agent' }).click();
    await web.page.getByRole('button', { name: 'New session' }).click();
    await web.page.getByLabel('Message to the agent').fill('Delete the paragraph');
    await web.page.getByRole('button', { name: 'Send' }).click();
    const card = web.page.locator('section.confirm');
    await card.waitFor();
    // Another tab (here the kernel's own list and answer) denies it first.
    const pending = web.kernel.confirmations.list({ status: 'pending' });
    expect(pending).toHaveLength(1);
    await web.kernel.confirmations.answer(pending[0]!.id, { approved: false, argsHash: pending[0]!.argsHash, answeredBy: 'person:alice' });
    await card.getByRole('button', { name: 'Approve' }).click();
    await web.page.getByText('was no longer waiting').waitFor();
    await card.waitFor({ state: 'detached' });
    expect((await web.act<{ block: { id: string } }>('block_get', { id: paragraph })).block.id).toBe(paragraph);
    await web.page.getByRole('button', { name: 'Stop' }).click();
    await web.page.getByRole('button', { name: 'Send' }).waitFor();
  });

  it('shows a long session\'s newest 200 messages, and earlier ones a page at a time on request', async () => {
    const web = await start();
    const id = newId();
    const entries = Array.from({ length: 450 }, (_, i) => (i % 2 === 0 ? { id: `u${i}`, type: 'user', content: `question ${i}` } : { id: `a${i}`, type: 'assistant', content: `answer ${i}` }));
    await web.kernel.sessions.save({ id, title: 'Long', entries });
    // What the page reads of the session: its last entries only (it read all of them to show these).
    const read: number[] = [];
    web.page.on('response', (answer) => {
      if (/\/api\/agent\/sessions\/[^/?]+(\?|$)/.test(answer.url()) && answer.request().method() === 'GET') void answer.json().then((body: { session: { entries: unknown[] } }) => read.push(body.session.entries.length), () => undefined);
    });
    await web.signIn(ADMIN);
    await web.page.goto(`${web.url}/#/agent/${id}`);
    await web.page.locator('.entry.assistant .content', { hasText: 'answer 449' }).waitFor();
    const messages = web.page.locator('ol.entries li.entry.user, ol.entries li.entry.assistant');
    expect(await messages.count()).toBe(200);
    expect(await web.page.getByText('question 248').count()).toBe(0);
    await expect.poll(() => read).toEqual([200]);
    // Earlier ones are read when asked for.
    await web.page.getByRole('button', { name: /Show 200 earlier messages \(250 not shown\)/ }).click();
    await expect.poll(() => messages.count()).toBe(400);
    await web.page.getByRole('button', { name: /Show 50 earlier messages/ }).click();
    await expect.poll(() => messages.count()).toBe(450);
    await expect.poll(() => read).toEqual([200, 400, 450]);
    expect(await web.page.locator('button.earlier').count()).toBe(0);
    await web.page.getByText('question 0', { exact: true }).waitFor();
  });

  it('follows a streaming answer to the end only while the person is there: reading earlier messages, they stay where they are', async () => {
    const web = await start();
    const id = newId();
    const entries = Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? { id: `u${i}`, type: 'user', content: `question ${i}` } : { id: `a${i}`, type: 'assistant', content: `answer ${i}\n\n${'a long line of the answer. '.repeat(8)}` }));
    await web.kernel.sessions.save({ id, title: 'Long', entries });
    await web.signIn(ADMIN);
    await web.page.goto(`${web.url}/#/agent/${id}`);
    await web.page.locator('.entry.assistant .content', { hasText: 'answer 59' }).waitFor();
    // How far the conversation is from its end (it scrolls itself on this wide screen).
    const fromEnd = (): Promise<number> => web.page.evaluate('(() => { const box = document.querySelector(".conversation"); return box.scrollHeight - box.scrollTop - box.clientHeight; })()') as Promise<number>;
    const top = (): Promise<number> => web.page.evaluate('document.querySelector(".conversation").scrollTop') as Promise<number>;
    await expect.poll(fromEnd).toBeLessThan(80);
    const stream = (word: string, count = 40) => {
      const words = Array.from({ length: count }, (_, i) => `${word}${i} `);
      return { kind: 'sse' as const, frames: framesFor('openai-chat', { text: words.join(''), deltas: words }), frameDelayMs: count > 40 ? 10 : 40 };
    };
    // At the end, the answer is followed as it grows.
    web.fake.reply(stream('followed'));
    await web.page.getByLabel('Message to the agent').fill('Answer at length');
    await web.page.getByRole('button', { name: 'Send' }).click();
    await web.page.locator('.entry.assistant .content', { hasText: 'followed39' }).waitFor();
    await expect.poll(fromEnd).toBeLessThan(80);
    // Scrolled up to read the first messages while the next answer streams: the page leaves them there.
    web.fake.reply(stream('unseen'));
    await web.page.getByLabel('Message to the agent').fill('Answer again');
    await web.page.getByRole('button', { name: 'Send' }).click();
    await web.page.locator('.entry.assistant .content', { hasText: 'unseen1' }).waitFor();
    // Its scroll event held back once, as when a token comes before it: the page still sees the person
    // scrolled up (it pulled them back down in such a moment, a failure seen in CI under load).
    await web.page.evaluate('(() => { const box = document.querySelector(".conversation"); box.addEventListener("scroll", (event) => event.stopImmediatePropagation(), { capture: true, once: true }); box.scrollTo(0, 0); })()');
    await expect.poll(top).toBe(0);
    await web.page.locator('.entry.assistant .content', { hasText: 'unseen39' }).waitFor();
    await web.page.getByRole('button', { name: 'Send' }).waitFor();
    expect(await top()).toBe(0);
    await web.page.getByText('question 0', { exact: true }).waitFor({ state: 'visible' });
    // Their own next message takes them to the end again, and its answer is followed.
    web.fake.reply(stream('sent', 240));
    await web.page.getByLabel('Message to the agent').fill('And once more');
    await web.page.getByRole('button', { name: 'Send' }).click();
    // The conversation shrinking meanwhile (a card answered, the stored copy in place of the live one)
    // pulls the scroll up to its new end, which is not the person going up: the answer is still followed.
    await web.page.locator('.entry.assistant .content', { hasText: 'sent2' }).waitFor();
    await web.page.evaluate('document.querySelectorAll("ol.entries li.entry").forEach((entry, i) => { if (i < 20) entry.style.display = "none"; })');
    // Checked while it streams (the stored copy that replaces it at the end shows the hidden entries again).
    await web.page.locator('.entry.assistant .content', { hasText: 'sent120' }).waitFor();
    // Polled: the scroll to the end follows the render by a frame, and tokens come in bursts under load.
    await expect.poll(fromEnd).toBeLessThan(80);
    await web.page.getByRole('button', { name: 'Send' }).waitFor();
  });

  it('shows a block\'s image again after its editor is cancelled, and its new alt text after an edit', async () => {
    const web = await start();
    await notes(web);
    await mkdir(join(web.kernel.workspace.root, 'assets'), { recursive: true });
    await writeFile(join(web.kernel.workspace.root, 'assets', 'dot.png'), Buffer.from(DOT_PNG, 'base64'));
    const notebook = (await web.act<{ notebooks: { id: string; name: string }[] }>('notebook_list', {})).notebooks.find((n) => n.name === 'Work')!.id;
    const doc = await web.act<Created>('document_create', { notebook, title: 'Picture', markdown: 'Look: ![a cat](assets/dot.png)' });
    await web.signIn(ADMIN);
    await web.page.goto(`${web.url}/#/doc/${doc.id}`);
    const image = web.page.locator('article.document img.asset');
    await web.page.locator('article.document img.asset[src^="blob:"]').waitFor();
    await web.page.locator('article.document button.edit').first().click();
    await web.page.locator('form.editor textarea').waitFor();
    await web.page.getByRole('button', { name: 'Cancel' }).click();
    await web.page.locator('article.document img.asset[src^="blob:"]').waitFor();
    await expect.poll(() => image.evaluate((img: unknown) => (img as { naturalWidth: number }).naturalWidth)).toBe(1);
    // An edit of the alt text shows the new one (the first was put back over it).
    await web.page.locator('article.document button.edit').first().click();
    await web.page.locator('form.editor textarea').fill('Look: ![a dog](assets/dot.png)');
    await web.page.getByRole('button', { name: 'Save' }).click();
    await web.page.locator('article.document img.asset[alt="a dog"][src^="blob:"]').waitFor();
    await web.page.waitForTimeout(200);
    expect(await image.getAttribute('alt')).toBe('a dog');
  });
});
