import { describe, expect, it } from 'vitest';
import { ADMIN, useWebApp } from './web-harness.js';
import { notes, type Created } from './web-notes.js';

const { start } = useWebApp();

interface Doc { document: { children?: { id: string; type: string }[] } }

/** The Markdown of a document's blocks, in order. */
async function blockTexts(act: <T>(target: string, input: Record<string, unknown>) => Promise<T>, id: string): Promise<string[]> {
  const doc = await act<Doc>('document_get', { id });
  return Promise.all((doc.document.children ?? []).map(async (block) => (await act<{ markdown: string }>('block_get', { id: block.id })).markdown.trim()));
}

describe('the web app keeps what a person types through what happens around it', () => {
  it('adds a block once, keeping what was typed while it was added', async () => {
    const web = await start();
    const { work } = await notes(web);
    const doc = await web.act<Created>('document_create', { notebook: work, title: 'Log', markdown: 'First entry.' });
    await web.signIn(ADMIN);
    await web.page.goto(`${web.url}/#/doc/${doc.id}`);
    const box = web.page.locator('#add-block');
    await box.waitFor();
    // The append held until the test has typed on: a second click added it twice, and the reset of the box lost what came after.
    let letGo!: () => void;
    const held = new Promise<void>((resolve) => { letGo = resolve; });
    await web.page.route('**/blocks/block/append', async (route) => { await held; await route.continue(); });
    await box.fill('Second entry.');
    await web.page.getByRole('button', { name: 'Add', exact: true }).click();
    expect(await web.page.getByRole('button', { name: 'Add', exact: true }).isDisabled()).toBe(true);
    await box.fill('Second entry.\n\nThird, typed while the second was added');
    letGo();
    await web.page.locator('article .block', { hasText: 'Second entry.' }).waitFor();
    await expect.poll(() => box.inputValue()).toBe('Third, typed while the second was added');
    expect(await blockTexts(web.act, doc.id)).toEqual(['First entry.', 'Second entry.']);
  });

  it('keeps the text of a block removed while it was edited, and lets another block be edited', async () => {
    const web = await start();
    const { work } = await notes(web);
    const doc = await web.act<Created>('document_create', { notebook: work, title: 'Shared', markdown: 'Keep this one.\n\nThe agent removes this one.' });
    const [, doomed] = (await web.act<Doc>('document_get', { id: doc.id })).document.children!;
    await web.signIn(ADMIN);
    await web.page.goto(`${web.url}/#/doc/${doc.id}`);
    const block = web.page.locator(`.block[data-block="${doomed!.id}"]`);
    await block.locator('button.edit').click();
    await web.page.locator(`#edit-${doomed!.id}`).fill('My rewrite of the removed block');
    // Removed elsewhere; the page reads the document again (here: a block added from its Add box).
    await web.act('block_delete', { id: doomed!.id });
    await web.page.locator('#add-block').fill('Added meanwhile.');
    await web.page.getByRole('button', { name: 'Add', exact: true }).click();
    await web.page.getByText('A block you were editing was removed meanwhile').waitFor();
    expect(await web.page.locator('#add-block').inputValue()).toBe('My rewrite of the removed block');
    // Nothing left open to save or cancel: another block opens ("save or cancel… first" before, for good).
    await web.page.locator('article .block', { hasText: 'Keep this one.' }).locator('button.edit').click();
    await web.page.locator('form.editor textarea').waitFor();
    expect(await web.page.locator('form.editor textarea').inputValue()).toContain('Keep this one.');
    // Another block's Edit clicked, then typing here before it answers: this editor and its text stay (it was replaced, the text gone).
    let letGo!: () => void;
    const held = new Promise<void>((resolve) => { letGo = resolve; });
    await web.page.route('**/blocks/block/get', async (route) => { await held; await route.continue(); });
    await web.page.locator('article .block', { hasText: 'Added meanwhile.' }).locator('button.edit').click();
    await web.page.locator('form.editor textarea').fill('Keep this one, typed while the other opened.');
    letGo();
    await web.page.getByText('Save or cancel the block you are editing first').waitFor();
    expect(await web.page.locator('form.editor textarea').inputValue()).toBe('Keep this one, typed while the other opened.');
  });

  it('keeps a title typed when the rename is refused, and the cursor on the next block after a removal', async () => {
    const web = await start();
    const { work } = await notes(web);
    const doc = await web.act<Created>('document_create', { notebook: work, title: 'Old title', markdown: 'One.\n\nTwo.\n\nThree.' });
    await web.signIn(ADMIN);
    await web.page.goto(`${web.url}/#/doc/${doc.id}`);
    await web.page.locator('h1#doc-title', { hasText: 'Old title' }).waitFor();
    // Changed elsewhere after the page showed it: the rename is refused (409), and the title typed stays in its field.
    await web.act('block_append', { parentId: doc.id, markdown: 'Four, from another tab.' });
    await web.page.locator('.title-block').getByRole('button', { name: 'Rename' }).click();
    await web.page.getByLabel('Title of the document').fill('A title worth keeping');
    await web.page.getByRole('button', { name: 'Save title' }).click();
    await web.page.locator('.title-block [role="alert"]').waitFor();
    expect(await web.page.getByLabel('Title of the document').inputValue()).toBe('A title worth keeping');
    // The title as it is now is shown beside it (the heading is hidden while the field is open).
    await web.page.locator('.title-block', { hasText: 'The title now: Old title' }).waitFor();
    await web.page.getByRole('button', { name: 'Cancel' }).click();
    // A block deleted from its editor: the cursor goes to the next block's Edit (it fell to the page's top).
    await web.page.reload();
    const two = web.page.locator('article .block', { hasText: 'Two.' });
    await two.locator('button.edit').click();
    await web.page.getByRole('button', { name: 'Delete…' }).click();
    await web.page.getByRole('button', { name: 'Delete it' }).click();
    await two.waitFor({ state: 'detached' });
    await web.page.waitForFunction(() => document.activeElement?.classList.contains('edit') === true && document.activeElement.closest('.block')?.textContent?.includes('Three.') === true);
  });

  it('lists a version saved while the history is open, and says when a hybrid search fell back to full text', async () => {
    const web = await start();
    const { plans, paragraph } = await notes(web);
    await web.signIn(ADMIN);
    await web.page.goto(`${web.url}/#/doc/${plans}`);
    await web.page.getByRole('button', { name: 'History' }).click();
    await web.page.locator('.history h2').waitFor();
    const listed = web.page.locator('.history li');
    const before = await listed.count();
    await web.page.locator(`.block[data-block="${paragraph}"] > button.edit`).click();
    await web.page.locator(`#edit-${paragraph}`).fill('Ship it, edited with the history open.');
    await web.page.getByRole('button', { name: 'Save' }).click();
    // The open list read again (it kept showing the versions of before the save).
    await expect.poll(() => listed.count()).toBe(before + 1);
    // No embedder: the kernel answers a hybrid search with full text, and says so; the page said nothing.
    await web.page.getByRole('link', { name: 'Search' }).click();
    const how = web.page.getByLabel('How');
    await how.selectOption('hybrid');
    await web.page.getByLabel('Search the notes').fill('library');
    await web.page.getByRole('button', { name: 'Search' }).click();
    await web.page.locator('p.note').waitFor();
  });
});
