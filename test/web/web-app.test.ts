import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ADMIN, round, useWebApp } from './web-harness.js';
import { notes, type Created } from './web-notes.js';

const { start } = useWebApp();
/** A real 1×1 PNG. */
const DOT_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

describe('the web app in a real browser', () => {
  it('signs in, browses the tree, renders a document, and runs none of a note\'s hostile content', async () => {
    const web = await start();
    const { plans } = await notes(web);
    const response = await web.page.goto(`${web.url}/`);
    const csp = response!.headers()['content-security-policy'] ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-eval');
    expect(csp.split(';').find((part) => part.trim().startsWith('script-src'))).not.toContain('unsafe-inline');
    await web.signIn(ADMIN);
    expect(await web.page.evaluate('sessionStorage.getItem("quire.token")')).toBe(ADMIN);
    expect(web.page.url()).not.toContain(ADMIN);
    await web.page.getByRole('button', { name: 'Open Work' }).click();
    await web.page.getByRole('link', { name: 'Plans' }).click();
    await web.page.getByRole('heading', { name: 'Plans', level: 1 }).waitFor();
    const article = web.page.locator('article.document');
    await expect(article.locator('h2', { hasText: 'Goals' }).count()).resolves.toBe(1);
    await expect(article.locator('strong', { hasText: 'web app' }).count()).resolves.toBe(1);
    await expect(article.locator('a.tag', { hasText: '#launch' }).count()).resolves.toBe(1);
    await expect(article.locator('input[type=checkbox]').count()).resolves.toBe(2);
    await expect(article.locator('table td', { hasText: '2' }).count()).resolves.toBe(1);
    await expect(article.locator('aside.callout-tip', { hasText: 'Small steps.' }).count()).resolves.toBe(1);
    await expect(article.locator('pre.math', { hasText: 'E = mc^2' }).count()).resolves.toBe(1);
    await web.shot('document');
    expect(web.page.url()).toContain(plans);

    // A note's image from the workspace's assets/: fetched with the token, shown from a blob: URL.
    await mkdir(join(web.kernel.workspace.root, 'assets'), { recursive: true });
    await writeFile(join(web.kernel.workspace.root, 'assets', 'a dot.png'), Buffer.from(DOT_PNG, 'base64'));
    const withImage = await web.act<Created>('document_create', { notebook: (await web.act<{ notebooks: { id: string; name: string }[] }>('notebook_list', {})).notebooks.find((n) => n.name === 'Work')!.id, title: 'Picture', markdown: 'Look: ![a dot](assets/a%20dot.png)' });
    await web.page.goto(`${web.url}/#/doc/${withImage.id}`);
    await web.page.locator('img.asset[src^="blob:"]').waitFor();
    // Polled: a new blob URL loads after its src is set.
    await expect.poll(() => web.page.locator('img.asset').evaluate((img: unknown) => (img as { naturalWidth: number }).naturalWidth)).toBe(1);
    // A file that is no image, linked as one: not fetched into the tab (a video was downloaded whole).
    await writeFile(join(web.kernel.workspace.root, 'assets', 'clip.mp4'), Buffer.alloc(4096));
    const withClip = await web.act<Created>('document_create', { notebook: (await web.act<{ notebooks: { id: string; name: string }[] }>('notebook_list', {})).notebooks.find((n) => n.name === 'Work')!.id, title: 'Clip', markdown: 'Watch: ![a clip](assets/clip.mp4)' });
    await web.page.goto(`${web.url}/#/doc/${withClip.id}`);
    await web.page.locator('img.asset.image-off').waitFor();
    expect(await web.page.locator('img.asset[src^="blob:"]').count()).toBe(0);

    await web.page.getByRole('link', { name: 'Hostile' }).click();
    await web.page.getByRole('heading', { name: 'Hostile', level: 1 }).waitFor();
    // Shown as text, never run: no script element, handler or javascript: link made it into the page.
    await web.page.waitForTimeout(300);
    expect(await web.page.evaluate('window.__pwned')).toBeUndefined();
    const doc = web.page.locator('article.document');
    expect(await doc.locator('script, iframe, svg, img[onerror], [onload]').count()).toBe(0);
    expect(await doc.locator('a[href^="javascript"]').count()).toBe(0);
    expect(await doc.innerText()).toContain('<script>window.__pwned = "script"</script>');
    await web.shot('hostile-note');
  });

  it('searches by meaning when an embedder is on: Hybrid is offered and finds a block without the words', async () => {
    const embedder = await topicEmbedder();
    try {
      const web = await start({
        providers: { embedder: { provider: 'openai', model: 'topics-3', baseURL: `${embedder.url}/v1`, apiKeyEnv: false } },
        plugins: { 'search-semantic': { config: { embedder: 'providers' } } },
      });
      const notebook = await web.act<Created>('notebook_create', { name: 'Garden' });
      await web.act('notebook_set_access', { id: notebook.id, access: 'published' });
      await web.act('document_create', { notebook: notebook.id, title: 'Beds', markdown: 'Tomatoes need sun and rich soil.\n\nVegetables want a sunny garden bed.\n\nThe fox ran past the dog.' });
      await web.act('embeddings_index', {});
      await web.signIn(ADMIN);
      await web.page.getByRole('link', { name: 'Search' }).click();
      await web.page.getByLabel('How').selectOption('hybrid');
      await web.page.getByLabel('Search the notes').fill('tomatoes');
      await web.page.getByRole('button', { name: 'Search' }).click();
      const asked: string[] = [];
      web.page.on('request', (request) => { if (request.url().includes('/search/')) asked.push(request.postData() ?? ''); });
      await web.page.locator('ol.hits li', { hasText: 'Vegetables want a sunny garden bed.' }).waitFor();
      await web.shot('search-hybrid');
      // Semantic search counts no total: the page says how many are shown (it said "undefined results").
      await web.page.getByLabel('How').selectOption('semantic');
      await web.page.getByRole('button', { name: 'Search' }).click();
      await web.page.getByText('on this page, nearest first').waitFor();
      expect(await web.page.locator('.search').innerText()).not.toContain('undefined');
      // Hybrid pages are fused at one depth for the whole query (the kernel's default reached five pages).
      await web.page.getByLabel('How').selectOption('hybrid');
      const doc = (await web.act<{ documents: { id: string }[] }>('document_list', { notebook: notebook.id })).documents[0]!.id;
      // A search still running when the person opens a document must not write its address over the document's.
      await web.page.route('**/search/hybrid', async (route) => { await new Promise((resolve) => setTimeout(resolve, 1_500)); await route.continue(); });
      await web.page.getByLabel('Search the notes').fill('fox');
      await web.page.getByRole('button', { name: 'Search' }).click();
      await web.page.evaluate((id) => { location.hash = `#/doc/${id}`; }, doc);
      await web.page.getByRole('heading', { name: 'Beds', level: 1 }).waitFor();
      await web.page.waitForTimeout(2_500);
      expect(new URL(web.page.url()).hash).toBe(`#/doc/${doc}`);
      expect(asked.filter((body) => body.includes('"query":"fox"')).every((body) => body.includes('"depth":200'))).toBe(true);
      expect(asked.some((body) => body.includes('"query":"fox"'))).toBe(true);
    } finally {
      await embedder.close();
    }
  });

  it('edits a block; a conflicting change is shown as a choice and nothing typed is lost; creates a document and a block', async () => {
    const web = await start();
    const { plans, paragraph } = await notes(web);
    await web.signIn(ADMIN);
    await web.page.goto(`${web.url}/#/doc/${plans}`);
    await web.page.locator(`[data-block="${paragraph}"] button.edit`).click();
    const editor = web.page.locator(`form.editor textarea`);
    await editor.fill('My version of the paragraph.');
    // Someone else changes the block meanwhile.
    await web.act('block_update', { id: paragraph, markdown: 'Their version.' });
    await web.page.getByRole('button', { name: 'Save' }).click();
    await web.page.getByText('changed by someone else').waitFor();
    expect(await web.page.locator('.conflict').innerText()).toContain('Their version.');
    expect(await editor.inputValue()).toBe('My version of the paragraph.');
    await web.shot('edit-conflict');
    // Typed while the choice is shown: "Keep mine" keeps this, not the text of the first save.
    await editor.fill('My version of the paragraph, finished after the conflict.');
    // "Yours" follows what is typed while the choice is shown.
    await web.page.locator('.conflict pre', { hasText: 'finished after the conflict.' }).waitFor();
    await web.page.getByRole('button', { name: 'Keep mine' }).click();
    await web.page.locator('article p', { hasText: 'finished after the conflict.' }).waitFor();
    const block = await web.act<{ markdown: string }>('block_get', { id: paragraph });
    expect(block.markdown.trim()).toBe('My version of the paragraph, finished after the conflict.');

    await web.page.getByLabel('Add to the end (Markdown)').fill('A new last paragraph.');
    await web.page.getByRole('button', { name: 'Add', exact: true }).click();
    await web.page.locator('article p', { hasText: 'A new last paragraph.' }).waitFor();
    await web.page.getByLabel('New document').fill('Fresh');
    await web.page.getByRole('button', { name: 'Create' }).click();
    await web.page.getByRole('heading', { name: 'Fresh', level: 1 }).waitFor();

    // Blocks are drawn again only when they change; an Edit on one that was not still knows what is being
    // edited: the typed text of another block is not dropped.
    await web.page.goto(`${web.url}/#/doc/${plans}`);
    await web.page.locator(`[data-block="${paragraph}"] button.edit`).click();
    await editor.fill('Typed, not saved.');
    await web.page.locator('article .block', { hasText: 'A new last paragraph.' }).locator('button.edit').click();
    await web.page.getByText('Save or cancel the block you are editing first').waitFor();
    expect(await editor.inputValue()).toBe('Typed, not saved.');
    await web.page.getByRole('button', { name: 'Cancel' }).click();

    // An attachment that is missing is asked for once, not at every render of its page; an SVG is drawn.
    await mkdir(join(web.kernel.workspace.root, 'assets'), { recursive: true });
    await writeFile(join(web.kernel.workspace.root, 'assets', 'shape.svg'), '<svg xmlns="http://www.w3.org/2000/svg" width="3" height="2"><rect width="3" height="2"/></svg>');
    const pictures = await web.act<Created>('document_create', { notebook: (await web.act<{ notebooks: { id: string; name: string }[] }>('notebook_list', {})).notebooks.find((n) => n.name === 'Work')!.id, title: 'Pictures', markdown: '![gone](assets/missing.png)\n\n![shape](assets/shape.svg)\n\nA line.' });
    const asked: string[] = [];
    web.page.on('request', (request) => { if (request.url().includes('/api/assets/')) asked.push(new URL(request.url()).pathname); });
    await web.page.goto(`${web.url}/#/doc/${pictures.id}`);
    const shape = web.page.locator('img.asset[data-asset="assets/shape.svg"][src]');
    await shape.waitFor();
    await expect.poll(() => shape.evaluate((img: unknown) => (img as { naturalWidth: number }).naturalWidth)).toBe(3);
    // From a data: URL, whose origin is opaque: a blob: URL has the app's, and an SVG's script ran there
    // when the image was opened on its own (Open image in new tab).
    const src = (await shape.getAttribute('src'))!;
    expect(src).toMatch(/^data:image\/svg\+xml;base64,/);
    const alone = await web.page.context().newPage();
    await alone.goto(src).catch(() => undefined);
    expect(await alone.evaluate(() => window.origin).catch(() => 'not opened')).not.toBe(new URL(web.url).origin);
    await alone.close();
    for (let round = 0; round < 3; round++) {
      await web.page.locator('article .block', { hasText: 'A line.' }).locator('button.edit').click();
      await web.page.getByRole('button', { name: 'Cancel' }).click();
      await web.page.locator('form.editor').waitFor({ state: 'detached' });
    }
    await web.page.waitForTimeout(200);
    expect(asked.filter((path) => path.endsWith('/missing.png'))).toHaveLength(1);
  });

  it('searches with highlighted snippets and opens a hit in its document', async () => {
    const web = await start();
    await notes(web);
    await web.signIn(ADMIN);
    await web.page.getByRole('link', { name: 'Search' }).click();
    await web.page.getByLabel('Search the notes').fill('library');
    await web.page.getByRole('button', { name: 'Search' }).click();
    await web.page.locator('ol.hits mark').first().waitFor();
    expect(await web.page.locator('ol.hits mark').first().innerText()).toBe('library');
    await web.shot('search');
    // Only the notebook chosen: Diary's words are not in Work.
    await web.page.getByLabel('Notebook').selectOption({ label: 'Diary' });
    await web.page.getByRole('button', { name: 'Search' }).click();
    await web.page.getByText('0 results').waitFor();
    await web.page.getByLabel('Notebook').selectOption({ label: 'Work' });
    await web.page.getByRole('button', { name: 'Search' }).click();
    await web.page.locator('ol.hits mark').first().waitFor();
    await web.page.locator('ol.hits a').first().click();
    await web.page.locator('.focused').waitFor();
    expect(await web.page.locator('.focused').innerText()).toContain('pick a library');
  });

  it('an agent turn: a confirmation approved with "Always allow" (a grant, then revoked), the turn undone, a write denied, a question answered', async () => {
    const web = await start();
    const { paragraph } = await notes(web);
    await web.signIn(ADMIN);
    web.fake.reply(
      round({ reasoning: 'I will edit the paragraph.', calls: [{ id: 'call_1', name: 'block_update', args: { id: paragraph, markdown: 'Edited by the agent.' } }] }),
      round({ text: 'I changed the paragraph.' }),
    );
    await web.page.getByRole('link', { name: 'Agent' }).click();
    await web.page.getByRole('button', { name: 'New session' }).click();
    await web.page.getByLabel('Message to the agent').fill('Please edit the paragraph');
    await web.page.getByRole('button', { name: 'Send' }).click();
    const card = web.page.locator('section.confirm');
    await card.waitFor();
    expect(await card.innerText()).toContain('block_update');
    expect(await card.innerText()).toContain('localWrite');
    await card.locator('[data-before]').waitFor();
    expect(await card.locator('[data-before]').innerText()).toContain('Edited by the agent.');
    await web.shot('agent-confirmation');
    await card.getByRole('button', { name: 'Always allow' }).click();
    await web.page.locator('.entry.assistant .content', { hasText: 'I changed the paragraph.' }).waitFor();
    expect((await web.act<{ markdown: string }>('block_get', { id: paragraph })).markdown.trim()).toBe('Edited by the agent.');
    await web.shot('agent-turn');

    // A person changes the block after the turn: the undo leaves it and says so, then undoes it on request.
    await web.act('block_update', { id: paragraph, markdown: 'A person changed it after.' });
    await web.page.getByRole('button', { name: 'Undo last turn' }).click();
    await web.page.getByText('Changed by both, and left as they are').waitFor();
    expect((await web.act<{ markdown: string }>('block_get', { id: paragraph })).markdown.trim()).toBe('A person changed it after.');
    await web.shot('agent-undo-conflict');
    await web.page.getByRole('button', { name: /Undo them too/ }).click();
    await web.page.getByText('Turn undone').waitFor();
    expect((await web.act<{ markdown: string }>('block_get', { id: paragraph })).markdown.trim()).not.toBe('Edited by the agent.');

    // The grant "Always allow" made is listed, and revoked.
    await web.page.getByRole('link', { name: 'Settings' }).click();
    await web.page.getByRole('link', { name: 'Grants' }).click();
    await web.page.locator('ul.grants li', { hasText: 'blocks/block/update' }).waitFor();
    await web.shot('settings-grants');
    await web.page.getByRole('button', { name: 'Revoke' }).click();
    await web.page.getByText('No standing grants').waitFor();

    // A write denied: the block stays as it is.
    web.fake.reply(
      round({ calls: [{ id: 'call_2', name: 'block_delete', args: { id: paragraph } }] }),
      round({ text: 'Understood, I left it.' }),
    );
    await web.page.getByRole('link', { name: 'Agent' }).click();
    await web.page.locator('.sessions a').first().click();
    await web.page.getByLabel('Message to the agent').fill('Delete the paragraph');
    await web.page.getByRole('button', { name: 'Send' }).click();
    await web.page.locator('section.confirm').getByRole('button', { name: 'Deny' }).click();
    await web.page.locator('.entry.assistant .content', { hasText: 'Understood, I left it.' }).waitFor();
    expect((await web.act<{ block: { id: string } }>('block_get', { id: paragraph })).block.id).toBe(paragraph);

    // A question, answered by picking an option.
    web.fake.reply(
      round({ calls: [{ id: 'call_3', name: 'question', args: { questions: [{ question: 'Which colour?', options: [{ label: 'Blue' }, { label: 'Green' }] }] } }] }),
      round({ text: 'Blue it is.' }),
    );
    await web.page.getByLabel('Message to the agent').fill('Pick a colour with me');
    await web.page.getByRole('button', { name: 'Send' }).click();
    await web.page.locator('form.question legend', { hasText: 'Which colour?' }).waitFor();
    await web.page.getByLabel('Blue').check();
    await web.page.getByRole('button', { name: 'Answer' }).click();
    await web.page.locator('.entry.assistant .content', { hasText: 'Blue it is.' }).waitFor();
    const lastRequest = JSON.stringify(web.fake.posts.at(-1)!.body);
    expect(lastRequest).toContain('Blue');
  });

  it('streams an answer without moving the page, shows the to-do list, runs in auto mode without asking, stops a turn, and works from the keyboard', async () => {
    const web = await start();
    const { plans, paragraph } = await notes(web);
    await web.signIn(ADMIN);
    // From the keyboard: Tab to the notebook, open it, Tab to a document, open it.
    let found = false;
    for (let i = 0; i < 40 && !found; i++) {
      await web.page.keyboard.press('Tab');
      found = await web.page.evaluate('document.activeElement?.getAttribute("aria-label") === "Open Work"') as boolean;
    }
    expect(found).toBe(true);
    await web.page.keyboard.press('Enter');
    await web.page.getByRole('link', { name: 'Plans' }).waitFor();
    for (let i = 0; i < 10 && !(await web.page.evaluate('document.activeElement?.textContent === "Plans"')); i++) await web.page.keyboard.press('Tab');
    await web.page.keyboard.press('Enter');
    await web.page.getByRole('heading', { name: 'Plans', level: 1 }).waitFor();
    expect(web.page.url()).toContain(plans);

    const words = Array.from({ length: 60 }, (_, i) => `word${i} `);
    web.fake.reply(
      round({ calls: [{ id: 'todo_1', name: 'todo_write', args: { todos: [{ content: 'Read the notes', status: 'in_progress' }, { content: 'Write a summary', status: 'pending' }] } }] }),
      { kind: 'sse', frames: (await import('../../fakes/wire-frames.js')).framesFor('openai-chat', { text: words.join(''), deltas: words }), frameDelayMs: 15 },
    );
    await web.page.getByRole('link', { name: 'Agent' }).click();
    await web.page.getByRole('button', { name: 'New session' }).click();
    await web.page.getByLabel('Message to the agent').fill('Plan and summarise');
    await web.page.evaluate(`window.__shift = 0; new PerformanceObserver((list) => { for (const entry of list.getEntries()) if (!entry.hadRecentInput) { window.__shift += entry.value; (window.__shifts ??= []).push([entry.value, entry.startTime, (entry.sources ?? []).map((source) => (source.node?.className ?? source.node?.nodeName) + ' ' + JSON.stringify(source.previousRect) + '->' + JSON.stringify(source.currentRect))]); } }).observe({ type: 'layout-shift' })`);
    await web.page.getByRole('button', { name: 'Send' }).click();
    await web.page.locator('.entry.assistant .content', { hasText: 'word59' }).waitFor();
    const shift = await web.page.evaluate('window.__shift') as number;
    expect(shift, JSON.stringify(await web.page.evaluate('window.__shifts ?? []'))).toBeLessThan(0.01);
    await web.page.locator('details.todos summary').click();
    expect(await web.page.locator('details.todos').innerText()).toContain('Read the notes');
    await web.shot('agent-streamed-todos');

    // Auto mode: the write runs without a confirmation. After a reload the selector shows the session's mode.
    // The change saved before the reload (nothing waited for its request).
    await Promise.all([
      web.page.waitForResponse((response) => response.request().method() === 'PUT' && new URL(response.url()).pathname.endsWith('/mode') && response.ok()),
      web.page.getByLabel('Mode').selectOption('auto'),
    ]);
    await web.page.reload();
    await web.page.locator('.entry.assistant .content', { hasText: 'word59' }).waitFor();
    expect(await web.page.getByLabel('Mode').inputValue()).toBe('auto');
    web.fake.reply(
      round({ calls: [{ id: 'call_auto', name: 'block_update', args: { id: paragraph, markdown: 'Written in auto mode.' } }] }),
      round({ text: 'Done without asking.' }),
    );
    await web.page.getByLabel('Message to the agent').fill('Edit it');
    await web.page.getByRole('button', { name: 'Send' }).click();
    await web.page.locator('li.entry.assistant:not(.live) .content', { hasText: 'Done without asking.' }).waitFor();
    expect(await web.page.locator('section.confirm').count()).toBe(0);
    expect((await web.act<{ markdown: string }>('block_get', { id: paragraph })).markdown.trim()).toBe('Written in auto mode.');

    // Stop: the model stalls after its first frame; the turn ends, interrupted, and the composer is back.
    web.fake.reply({ kind: 'sse', frames: (await import('../../fakes/wire-frames.js')).framesFor('openai-chat', { text: 'I will think for a long time' }), stallAfter: 1 });
    await web.page.getByLabel('Message to the agent').fill('Take your time');
    const postsBefore = web.fake.posts.length;
    await web.page.getByRole('button', { name: 'Send' }).click();
    // Stopped once the request is at the model (a Stop clicked before it would end the turn without one).
    for (const end = Date.now() + 10_000; web.fake.posts.length === postsBefore && Date.now() < end;) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(web.fake.posts.length).toBe(postsBefore + 1);
    await web.page.getByRole('button', { name: 'Stop' }).click();
    await web.page.getByRole('button', { name: 'Send' }).waitFor();
    // The stopped turn's end shown before the next message (its late error matched the refusal's below).
    // (said on the live answer, or on the stored draft when text had arrived: both in the render that ends it)
    await web.page.getByText('Stopped before it was finished').first().waitFor();
    expect(await web.fake.posts.at(-1)!.closedEarly).toBe(true);

    // A message the kernel refuses before the turn begins (over 200,000 characters) goes back in the box.
    const long = 'x'.repeat(200_001);
    await web.page.getByLabel('Message to the agent').fill(long);
    await web.page.getByRole('button', { name: 'Send' }).click();
    await web.page.locator('.entry.assistant [role="alert"]').waitFor();
    await expect.poll(async () => (await web.page.getByLabel('Message to the agent').inputValue()).length).toBe(long.length);
  });

});

/** A loopback OpenAI-compatible `/v1/embeddings`: a text's vector counts its words of three topics. */
async function topicEmbedder(): Promise<{ url: string; close(): Promise<void> }> {
  const topics = [['tomato', 'soil', 'sun', 'vegetable', 'garden'], ['recipe', 'cook', 'soup'], ['fox', 'dog', 'cat']];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { input: string[]; model: string };
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
        object: 'list', model: body.model, usage: { prompt_tokens: 1, total_tokens: 1 },
        data: body.input.map((input, index) => ({ object: 'embedding', index, embedding: [...topics.map((words) => words.filter((word) => input.toLowerCase().includes(word)).length), 0.01] })),
      }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => { server.closeAllConnections(); await new Promise((resolve) => server.close(resolve)); },
  };
}
