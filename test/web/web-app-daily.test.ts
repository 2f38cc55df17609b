import { describe, expect, it } from 'vitest';
import { framesFor } from '../../fakes/wire-frames.js';
import { ADMIN, READER, round, useWebApp } from './web-harness.js';
import { notes, type Created } from './web-notes.js';

const { start } = useWebApp();

/** A paragraph of some length, as a note's are (the page must scroll). */
const paragraph = (i: number): string => `Paragraph ${i} of the quarterly review: the figures of the quarter, what changed since the last one, and what the team decided to do about the shipping delays and the budget.`;

describe('the web app in daily use: a long document, the agent asking, search and Back', () => {
  it('keeps the place after a save in a document opened at a block, gives the cursor back to Edit, opens the editor at the end, and keeps an Add box\'s text', async () => {
    const web = await start();
    const { work } = await notes(web);
    const long = await web.act<Created>('document_create', { notebook: work, title: 'Long', markdown: Array.from({ length: 120 }, (_, i) => paragraph(i)).join('\n\n') });
    const blocks = (await web.act<{ document: { children: { id: string }[] } }>('document_get', { id: long.id })).document.children.map((block) => block.id);
    await web.signIn(ADMIN);
    // Opened at its tenth block, as a search hit or a block reference opens it.
    await web.page.goto(`${web.url}/#/doc/${long.id}/${blocks[10]}`);
    await web.page.locator(`.block.focused[data-block="${blocks[10]}"]`).waitFor();
    const far = web.page.locator(`.block[data-block="${blocks[100]}"]`);
    await far.scrollIntoViewIfNeeded();
    // The editor as the page first shows it (a mutation observer runs before the browser takes another key).
    await web.page.evaluate(() => {
      const seen = window as unknown as { firstSight?: { focused: boolean; caret: number; end: number } };
      const observer = new MutationObserver(() => {
        const opened = document.querySelector<HTMLTextAreaElement>('form.editor textarea');
        if (!opened) return;
        seen.firstSight = { focused: document.activeElement === opened, caret: opened.selectionStart, end: opened.value.replace(/\n+$/, '').length };
        observer.disconnect();
      });
      observer.observe(document.body, { childList: true, subtree: true });
    });
    await far.locator('button.edit').click();
    const area = web.page.locator(`#edit-${blocks[100]}`);
    await web.page.waitForFunction((id) => document.activeElement?.id === id, `edit-${blocks[100]}`);
    // It has the cursor, at the end of its text, from the moment it appears: the cursor came a frame later
    // (longer on a busy machine), and a select-all and new text typed meanwhile went after the old text.
    const firstSight = await web.page.evaluate(() => (window as unknown as { firstSight?: { focused: boolean; caret: number; end: number } }).firstSight);
    expect(firstSight).toEqual({ focused: true, caret: firstSight?.end, end: paragraph(100).length });
    // The cursor at the end of the text: typing went before it.
    await web.page.keyboard.type(' Added at the end.');
    expect((await area.inputValue()).trim()).toBe(`${paragraph(100)} Added at the end.`);
    await web.page.getByRole('button', { name: 'Save' }).click();
    await web.page.getByText('Added at the end.').waitFor();
    // Still where the person was (the page jumped back to the tenth block), the cursor on that block's Edit.
    expect(await far.evaluate((element) => { const box = element.getBoundingClientRect(); return box.bottom > 0 && box.top < window.innerHeight; })).toBe(true);
    await web.page.waitForFunction((id) => document.activeElement?.closest('.block')?.getAttribute('data-block') === id && document.activeElement?.classList.contains('edit') === true, blocks[100]);
    // Cancel gives the cursor back too.
    await far.locator('button.edit').click();
    await web.page.getByRole('button', { name: 'Cancel' }).click();
    await web.page.waitForFunction((id) => document.activeElement?.closest('.block')?.getAttribute('data-block') === id, blocks[100]);
    // Text typed in "Add to the end" and not added is there again after the page was left.
    await web.page.locator('#add-block').fill('Half a thought, not added yet');
    await web.page.getByRole('link', { name: 'Search' }).click();
    await web.page.locator('#q').waitFor();
    await web.page.goBack();
    expect(await web.page.locator('#add-block').inputValue()).toBe('Half a thought, not added yet');
    // Left for another page with that text kept: leaving the app asks first (it asked only on the document).
    const asks = (): Promise<boolean> => web.page.evaluate(() => { const event = new Event('beforeunload', { cancelable: true }); window.dispatchEvent(event); return event.defaultPrevented; });
    await web.page.getByRole('link', { name: 'Search' }).click();
    await web.page.locator('#q').waitFor();
    expect(await asks()).toBe(true);
    // Signed out with a block's editor open: what was typed is not kept for whoever signs in next on
    // this tab (and saved as theirs); the page closing after the sign-out kept it.
    await web.page.goBack();
    await far.locator('button.edit').click();
    await area.fill('SECRET typed before signing out');
    // Asked first (it was forgotten without a word): kept on "Cancel", forgotten on "OK".
    const asked: string[] = [];
    web.page.once('dialog', (dialog) => { asked.push(dialog.message()); void dialog.dismiss(); });
    await web.page.getByRole('button', { name: 'Sign out' }).click();
    await expect.poll(() => asked).toEqual([expect.stringContaining('signing out forgets it')]);
    expect(await area.inputValue()).toBe('SECRET typed before signing out');
    web.page.once('dialog', (dialog) => void dialog.accept());
    await web.page.getByRole('button', { name: 'Sign out' }).click();
    // Signed in again on the same page (web.signIn loads the page anew, which forgets everything anyway).
    await web.page.getByLabel('Token').fill(ADMIN);
    await web.page.getByRole('button', { name: 'Sign in' }).click();
    await web.page.getByRole('button', { name: 'Sign out' }).waitFor();
    expect(await asks()).toBe(false);
    await web.page.goto(`${web.url}/#/doc/${long.id}`);
    await web.page.locator('#add-block').waitFor();
    expect(await web.page.locator('#add-block').inputValue()).toBe('');
    await far.locator('button.edit').click();
    expect(await area.inputValue()).not.toContain('SECRET');
    expect((await area.inputValue()).trim()).toBe(`${paragraph(100)} Added at the end.`);
  });

  it('keeps a message typed and not sent when another session is opened, and asks before the app is left with it', async () => {
    const web = await start();
    await web.signIn(ADMIN);
    const first = await web.newSession();
    await web.page.locator('#message').fill('A question not sent yet');
    await web.newSession();
    expect(await web.page.locator('#message').inputValue()).toBe('');
    expect(await web.page.evaluate(() => { const event = new Event('beforeunload', { cancelable: true }); window.dispatchEvent(event); return event.defaultPrevented; })).toBe(true);
    await web.page.goto(`${web.url}/#/agent/${first}`);
    await web.page.locator('#message').waitFor();
    expect(await web.page.locator('#message').inputValue()).toBe('A question not sent yet');
    // The session deleted, its message goes with it: leaving the app no longer asks about it.
    await web.page.getByRole('button', { name: 'Delete…' }).click();
    await web.page.getByRole('button', { name: 'Delete it' }).click();
    await web.page.waitForURL(/#\/agent$/);
    expect(await web.page.evaluate(() => { const event = new Event('beforeunload', { cancelable: true }); window.dispatchEvent(event); return event.defaultPrevented; })).toBe(false);
    // Deleted elsewhere (another tab, the CLI): found gone when opened, its message is forgotten too.
    const second = await web.newSession();
    await web.page.locator('#message').fill('Another question not sent');
    await web.newSession();
    await web.kernel.sessions.delete(second);
    await web.page.goto(`${web.url}/#/agent/${second}`);
    await web.page.getByText(/NOT_FOUND|No session/).first().waitFor();
    expect(await web.page.evaluate(() => { const event = new Event('beforeunload', { cancelable: true }); window.dispatchEvent(event); return event.defaultPrevented; })).toBe(false);
  });

  it('sends every ticked option with the typed answer, and a single choice as shown; the card takes the cursor', async () => {
    const web = await start();
    await web.signIn(ADMIN);
    web.fake.reply(
      round({ calls: [{ id: 'call_q', name: 'question', args: { questions: [
        { question: 'Which tags?', options: [{ label: 'work' }, { label: 'home' }, { label: 'later' }], multiple: true, custom: true },
        { question: 'Pick one', options: [{ label: 'A' }, { label: 'B' }], custom: true },
      ] } }] }),
      round({ text: 'Tagged.' }),
    );
    await web.newSession();
    await web.page.getByLabel('Message to the agent').fill('Tag my notes');
    await web.page.getByRole('button', { name: 'Send' }).click();
    const card = web.page.locator('form.question');
    await card.waitFor();
    // The card has the cursor: a keyboard user's keys went on into the message box.
    await web.page.waitForFunction(() => document.activeElement?.matches('form.question') === true);
    const [tags, one] = [card.locator('fieldset').nth(0), card.locator('fieldset').nth(1)];
    await tags.getByLabel('work').check();
    await tags.getByLabel('home').check();
    await tags.getByLabel('Your answer').fill('urgent');
    // Typing kept the ticks (it dropped them).
    expect([await tags.getByLabel('work').isChecked(), await tags.getByLabel('home').isChecked()]).toEqual([true, true]);
    await one.getByLabel('Your answer').fill('C, my own');
    await one.getByLabel('A', { exact: true }).check();
    // One answer goes: the pick clears the text (it stayed shown, and was not sent).
    expect(await one.getByLabel('Your answer').inputValue()).toBe('');
    await card.getByRole('button', { name: 'Answer' }).click();
    await web.page.locator('.entry.assistant .content', { hasText: 'Tagged.' }).waitFor();
    const result = JSON.stringify(web.fake.posts.at(-1)!.body.messages);
    for (const answer of ['work', 'home', 'urgent']) expect(result).toContain(answer);
    expect(result).not.toContain('C, my own');
  });

  it('says a message was not sent when another tab\'s turn is running, instead of "the connection was lost"', async () => {
    const web = await start();
    await web.signIn(ADMIN);
    const id = await web.newSession();
    // Another tab starts a turn whose model goes quiet; this page, loaded before, does not know it runs.
    web.fake.reply({ kind: 'sse', frames: framesFor('openai-chat', { text: 'Thinking it over at length.' }), stallAfter: 1 });
    const other = new AbortController();
    void fetch(`${web.url}/api/agent/sessions/${id}/turns`, { method: 'POST', signal: other.signal, headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ message: 'From the other tab' }) }).catch(() => undefined);
    await expect.poll(() => web.kernel.turns.isRunning(id)).toBe(true);
    await web.page.getByLabel('Message to the agent').fill('From this tab');
    await web.page.getByRole('button', { name: 'Send' }).click();
    await web.page.getByText('Your message was not sent').waitFor();
    expect(await web.page.getByText('The connection to the turn was lost').count()).toBe(0);
    expect(await web.page.getByLabel('Message to the agent').inputValue()).toBe('From this tab');
    await web.page.getByRole('button', { name: 'Stop' }).click();
    other.abort();
  });

  it('comes Back from a result to the same page of the same search, and pages with the filters searched, not those changed since', async () => {
    const web = await start();
    const { work } = await notes(web);
    await web.act('document_create', { notebook: work, title: 'Quarters', markdown: Array.from({ length: 45 }, (_, i) => paragraph(i)).join('\n\n') });
    await web.signIn(ADMIN);
    await web.page.getByRole('link', { name: 'Search' }).click();
    await web.page.locator('#q').fill('quarterly');
    await web.page.getByLabel('Blocks').selectOption('paragraph');
    await web.page.getByRole('button', { name: 'Search', exact: true }).click();
    await web.page.getByText('Page 1 of 3').waitFor();
    await web.page.getByRole('button', { name: 'Next' }).click();
    await web.page.getByText('Page 2 of 3').waitFor();
    // Changed and not searched: the next page is still of paragraphs (headings have none: it was empty).
    await web.page.getByLabel('Blocks').selectOption('heading');
    await web.page.getByRole('button', { name: 'Next' }).click();
    await web.page.getByText('Page 3 of 3').waitFor();
    expect(await web.page.locator('ol.hits li').count()).toBe(5);
    expect(new URL(web.page.url()).hash).toBe('#/search?q=quarterly&type=paragraph&page=3');
    await web.page.locator('ol.hits li a').first().click();
    await web.page.locator('article.document').waitFor();
    await web.page.goBack();
    await web.page.getByText('Page 3 of 3').waitFor();
    expect([await web.page.locator('#q').inputValue(), await web.page.getByLabel('Blocks').inputValue(), await web.page.locator('ol.hits li').count()]).toEqual(['quarterly', 'paragraph', 5]);
    // An address naming a way of searching that is off here (no embedder): full text, not a blank menu and an error.
    await web.page.goto(`${web.url}/#/search?q=quarterly&how=semantic`);
    await web.page.getByText('Page 1 of 3').waitFor();
    expect(await web.page.getByLabel('How').inputValue()).toBe('fulltext');
    expect(await web.page.locator('p.error').count()).toBe(0);
    // Opened afresh at it (a bookmark): the same, once the page learns what is on.
    await web.page.reload();
    await web.page.getByText('Page 1 of 3').waitFor();
    await expect.poll(() => web.page.getByLabel('How').inputValue()).toBe('fulltext');
    await expect.poll(() => web.page.locator('p.error').count()).toBe(0);
  });

  it('ticks a task, deletes a block after asking, and says when the kernel cannot be reached', async () => {
    const web = await start();
    const { plans, paragraph: target } = await notes(web);
    await web.signIn(ADMIN);
    await web.page.goto(`${web.url}/#/doc/${plans}`);
    const task = web.page.locator('li', { hasText: 'write tests' }).getByRole('checkbox');
    expect(await task.isChecked()).toBe(false);
    await task.click();
    await expect.poll(() => task.isChecked()).toBe(true);
    const item = await task.evaluate((box) => box.closest('li')!.getAttribute('data-block')!);
    expect((await web.act<{ markdown: string }>('block_get', { id: item })).markdown).toMatch(/^- \[x\] write tests/);
    await task.click();
    // Unticked as the page shows it once it read the document again (the box keeps its state until then).
    await expect.poll(() => task.isChecked()).toBe(false);
    expect((await web.act<{ markdown: string }>('block_get', { id: item })).markdown).toMatch(/^- \[ \] write tests/);
    // Changed by someone else since the page showed it: nothing is written, and that is said (a read wiped the message).
    await web.act('block_update', { id: item, markdown: '- [ ] write tests first' });
    await task.click();
    await web.page.getByText('This task was changed by someone else').waitFor();
    expect((await web.act<{ markdown: string }>('block_get', { id: item })).markdown).toMatch(/^- \[ \] write tests first/);
    // A removal asked about for one block is not carried over to the next one opened.
    await web.page.locator(`[data-block="${target}"] button.edit`).click();
    await web.page.getByRole('button', { name: 'Delete…' }).click();
    const taskText = web.page.locator('li', { hasText: 'write tests first' }).locator('.block');
    const taskParagraph = await taskText.getAttribute('data-block');
    await taskText.locator('button.edit').click();
    await web.page.locator(`#edit-${taskParagraph}`).waitFor();
    expect(await web.page.getByRole('button', { name: 'Delete it' }).count()).toBe(0);
    // The only paragraph of a list item takes the item with it (a bare "- [ ]" was left).
    await web.page.getByRole('button', { name: 'Delete…' }).click();
    await web.page.getByRole('button', { name: 'Delete it' }).click();
    await expect.poll(() => web.page.locator('li', { hasText: 'write tests' }).count()).toBe(0);
    expect((await web.act<{ markdown: string }>('document_get_markdown', { id: plans })).markdown).not.toMatch(/^- \[ \]\s*$/m);
    // Deleting asks once more, and then the block is gone.
    await web.page.locator(`[data-block="${target}"] button.edit`).click();
    await web.page.getByRole('button', { name: 'Delete…' }).click();
    await web.page.getByRole('button', { name: 'Keep it' }).click();
    await web.page.getByRole('button', { name: 'Delete…' }).click();
    await web.page.getByRole('button', { name: 'Delete it' }).click();
    // Gone from the page (the editor, the block): not only its editor closed.
    await expect.poll(() => web.page.locator(`[data-block="${target}"]`).count()).toBe(0);
    const after = await web.act<{ document: { children: { id: string }[] } }>('document_get', { id: plans });
    expect(after.document.children.map((block) => block.id)).not.toContain(target);
    // No answer at all: said as the kernel out of reach, not "Failed to fetch".
    await web.page.route('**/api/**', (route) => route.abort('connectionrefused'));
    await web.page.getByRole('link', { name: 'Search' }).click();
    await web.page.locator('#q').fill('plans');
    await web.page.getByRole('button', { name: 'Search', exact: true }).click();
    await web.page.getByText('The kernel cannot be reached').waitFor();
  });

  it('shows an answer\'s Markdown as text and lists, says a stopped answer stopped, and reaches sessions past the first 50', async () => {
    const web = await start();
    for (let i = 0; i < 60; i++) await web.kernel.sessions.save({ id: `20261201000000-s${String(i).padStart(6, '0')}`, title: `Session number ${i}`, entries: [] });
    await web.signIn(ADMIN);
    await web.page.getByRole('link', { name: 'Agent' }).click();
    const listed = web.page.locator('aside.sessions li');
    await expect.poll(() => listed.count()).toBe(50);
    await web.page.getByRole('button', { name: 'Show more sessions (10 not shown)' }).click();
    await expect.poll(() => listed.count()).toBe(60);
    await web.page.getByLabel('Find a session by its title').fill('number 5');
    await expect.poll(() => listed.count()).toBe(11);
    await web.page.getByRole('button', { name: 'New session' }).click();
    await web.page.locator('.chat h1').waitFor();
    web.fake.reply(round({ text: 'Two things:\n\n- **first** one\n- second <img src=x onerror="window.__pwned=1">\n\n```js\nconst a = 1;\n```' }));
    await web.page.getByLabel('Message to the agent').fill('List them');
    await web.page.getByRole('button', { name: 'Send' }).click();
    const answer = web.page.locator('.entry.assistant:not(.live) .content');
    await answer.locator('li strong', { hasText: 'first' }).waitFor();
    expect(await answer.locator('pre code').innerText()).toBe('const a = 1;');
    expect(await answer.locator('li').nth(1).innerText()).toContain('<img src=x');
    expect(await web.page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await web.page.locator('.entry .stopped').count()).toBe(0);
    // Stopped while it was being written: kept, and said to be unfinished.
    web.fake.reply({ kind: 'sse', frames: framesFor('openai-chat', { text: 'The beginning of a long answer' }), stallAfter: 2 });
    await web.page.getByLabel('Message to the agent').fill('Tell me at length');
    await web.page.getByRole('button', { name: 'Send' }).click();
    await web.page.locator('.entry.assistant.live .content', { hasText: 'The beginning' }).waitFor();
    await web.page.getByRole('button', { name: 'Stop' }).click();
    await web.page.getByText('Stopped before it was finished').waitFor();
    expect(await web.page.locator('.entry.assistant', { hasText: 'Stopped before it was finished' }).innerText()).toContain('The beginning');
    // Stopped after a call, before the next answer's first word: said too (it read as a finished answer).
    web.fake.reply(round({ text: 'Let me look at the notebooks first.', calls: [{ id: 'call_look', name: 'notebook_list', args: {} }] }), { kind: 'sse', frames: framesFor('openai-chat', { text: 'never sent' }), stallAfter: 0 });
    await web.page.getByLabel('Message to the agent').fill('Look around');
    const postsBefore = web.fake.posts.length;
    await web.page.getByRole('button', { name: 'Send' }).click();
    await web.page.locator('.entry.assistant.live', { hasText: 'Let me look at the notebooks first.' }).waitFor();
    // Stopped once the next answer is asked for (after the call), not at a guessed moment.
    await expect.poll(() => web.fake.posts.length).toBe(postsBefore + 2);
    await web.page.getByRole('button', { name: 'Stop' }).click();
    await expect.poll(() => web.page.getByText('Stopped before it was finished').count()).toBe(2);
    // An answer cut by an error is shown once (the stored one), the error under the live view.
    // (cut at the model's output limit: the kernel keeps it and says OUTPUT_LIMIT)
    web.fake.reply({ kind: 'sse', frames: framesFor('openai-chat', { text: 'An answer that will be shown once only.' }).map((frame) => frame.replace('"finish_reason":"stop"', '"finish_reason":"length"')) });
    await web.page.getByLabel('Message to the agent').fill('Answer once');
    await web.page.getByRole('button', { name: 'Send' }).click();
    // Once stored, the live copy is gone or still there twice: counted then, not after a guessed second.
    await web.page.locator('li.entry.assistant:not(.live) .content', { hasText: 'An answer that will be shown once only.' }).waitFor();
    expect(await web.page.getByText('An answer that will be shown once only.').count()).toBe(1);
    expect(await web.page.locator('.entry.assistant.live .error').innerText()).toContain('OUTPUT_LIMIT');
  });

  it('tells a reader who opens the agent\'s address that it is for administrators', async () => {
    const web = await start();
    await web.signIn(READER);
    await web.page.goto(`${web.url}/#/agent`);
    await web.page.getByText('The agent is for administrators').waitFor();
  });
});
