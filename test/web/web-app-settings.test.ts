import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FixtureHttpMcpServer } from '../fixtures/mcp/http-server.js';
import { ADMIN, READER, round, useWebApp } from './web-harness.js';
import { notes, type Created } from './web-notes.js';

const { start, tempDir } = useWebApp();

describe('the web app in a real browser: settings, confirmations, MCP servers, readers', () => {
  it('settings and history: the audit log filtered and its chain verified, a plugin disabled and enabled, a snapshot compared, a document version restored', async () => {
    const web = await start();
    const { plans, paragraph } = await notes(web);
    await web.act('snapshot_create', { memo: 'before the edit' });
    await web.act('block_update', { id: paragraph, markdown: 'Changed after the snapshot.' });
    await web.signIn(ADMIN);

    await web.page.getByRole('link', { name: 'Settings' }).click();
    await web.page.getByRole('link', { name: 'Audit log' }).click();
    await web.page.locator('.audit tbody tr').first().waitFor();
    expect(await web.page.locator('.audit tbody').innerText()).toContain('blocks/block/update');
    await web.page.getByLabel('Outcome').selectOption('refused');
    await web.page.getByRole('button', { name: 'Verify the chain' }).click();
    await web.page.getByText('The chain holds').waitFor();
    await web.shot('settings-audit');

    await web.page.getByRole('link', { name: 'Plugins' }).click();
    const todo = web.page.locator('li[data-plugin="todo"]');
    await todo.getByRole('button', { name: 'Disable' }).click();
    await todo.locator('.state', { hasText: 'disabled' }).waitFor();
    await todo.getByRole('button', { name: 'Enable' }).click();
    await todo.locator('.state', { hasText: 'active' }).waitFor();

    await web.page.getByRole('link', { name: 'Snapshots' }).click();
    await web.page.getByRole('button', { name: 'Changes since' }).first().click();
    await web.page.locator('.snapshots pre', { hasText: '1 changed' }).waitFor();

    await web.page.goto(`${web.url}/#/doc/${plans}`);
    await web.page.getByRole('button', { name: 'History' }).click();
    await web.page.getByRole('button', { name: 'Show' }).first().click();
    await web.page.locator('.history pre', { hasText: 'Ship the **web app**' }).waitFor();
    await web.shot('document-history');
    // Asked first: dismissed, nothing is restored; accepted, it is.
    web.page.once('dialog', (dialog) => void dialog.dismiss());
    await web.page.getByRole('button', { name: 'Restore' }).first().click();
    await web.page.waitForTimeout(300);
    expect(await web.page.getByText('Restored the version').count()).toBe(0);
    web.page.once('dialog', (dialog) => void dialog.accept());
    await web.page.getByRole('button', { name: 'Restore' }).first().click();
    await web.page.getByText('Restored the version').waitFor();
    await web.page.locator('article p strong', { hasText: 'web app' }).waitFor();
    expect((await web.act<{ markdown: string }>('block_get', { id: paragraph })).markdown).toContain('Ship the **web app**');
  });

  it('snapshots: a hundred at a time, older ones on request; one deleted from Settings, a tagged one kept', async () => {
    const web = await start();
    await notes(web);
    const ids: string[] = [];
    for (let i = 0; i < 101; i++) ids.push((await web.act<Created>('snapshot_create', { memo: `snapshot ${i}` })).id);
    await web.act('snapshot_tag', { id: ids[100], tag: 'keep' });
    await web.signIn(ADMIN);
    await web.page.goto(`${web.url}/#/settings/snapshots`);
    await web.page.getByText('100 of 101 snapshots').waitFor();
    expect(await web.page.locator('.snapshots li').count()).toBe(100);
    await web.page.getByRole('button', { name: 'Show older snapshots' }).click();
    await web.page.getByText('101 of 101 snapshots').waitFor();
    expect(await web.page.getByRole('button', { name: 'Show older snapshots' }).count()).toBe(0);
    expect(await web.page.locator(`li[data-snapshot="${ids[0]}"]`).count()).toBe(1);
    expect(await web.page.locator(`li[data-snapshot="${ids[100]}"]`).getByRole('button', { name: 'Delete' }).isDisabled()).toBe(true);
    web.page.once('dialog', (dialog) => void dialog.accept());
    await web.page.locator(`li[data-snapshot="${ids[99]}"]`).getByRole('button', { name: 'Delete' }).click();
    await web.page.getByText('100 of 100 snapshots').waitFor();
    expect(await web.page.locator(`li[data-snapshot="${ids[99]}"]`).count()).toBe(0);
    expect((await web.act<{ total: number }>('snapshot_list', {})).total).toBe(100);
  });

  it('a confirmation says what a skill install would write (its dry run) and what an append adds, before the person answers', async () => {
    const web = await start();
    const { plans } = await notes(web);
    const skill = join(await tempDir('quire-web-skill-'), 'meeting-notes');
    await mkdir(join(skill, 'templates'), { recursive: true });
    await writeFile(join(skill, 'SKILL.md'), '---\nname: meeting-notes\ndescription: Write meeting notes in the house style. Use when asked for minutes.\n---\n# Meeting notes\n\nUse the template.\n');
    await writeFile(join(skill, 'templates', 'minutes.md'), '# Minutes\n');
    await web.signIn(ADMIN);
    web.fake.reply(
      round({ calls: [{ id: 'call_skill', name: 'skill_install', args: { path: skill } }] }),
      round({ calls: [{ id: 'call_append', name: 'block_append', args: { parentId: plans, markdown: 'An appended line.' } }] }),
      round({ text: 'Nothing installed, nothing added.' }),
    );
    await web.page.getByRole('link', { name: 'Agent' }).click();
    await web.page.getByRole('button', { name: 'New session' }).click();
    await web.page.getByLabel('Message to the agent').fill('Install my skill and add a line');
    await web.page.getByRole('button', { name: 'Send' }).click();
    const install = web.page.locator('section.confirm', { hasText: 'skill_install' });
    await install.locator('.would-write li', { hasText: 'templates/minutes.md' }).waitFor();
    expect(await install.locator('.would-write').innerText()).toContain('meeting-notes');
    await web.shot('agent-confirm-skill-install');
    await install.getByRole('button', { name: 'Deny' }).click();
    const append = web.page.locator('section.confirm', { hasText: 'block_append' });
    await append.locator('[data-before]', { hasText: 'Added inside it' }).waitFor();
    await append.getByRole('button', { name: 'Deny' }).click();
    await web.page.locator('.entry.assistant .content', { hasText: 'Nothing installed, nothing added.' }).waitFor();
    expect((await web.act<{ skills: unknown[] }>('skill_list', {})).skills).toEqual([]);
  });

  it('an external MCP server\'s new tool waits in Settings until the person approves its definition', async () => {
    const remote = await new FixtureHttpMcpServer([{ name: 'echo', description: 'Echo the arguments back', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }]).start();
    try {
      const web = await start({ config: { mcp: { servers: { remote: { url: remote.url, trusted: true } } } } });
      await web.signIn(ADMIN);
      await remote.setTools([{ name: 'echo', description: 'Echo the arguments back', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }, { name: 'second', description: 'A tool added later', inputSchema: { type: 'object' } }]);
      await expect.poll(() => web.kernel.externalMcp.describe()[0]!.pending.length).toBe(1);
      await web.page.goto(`${web.url}/#/settings/mcp`);
      await web.page.locator('.pending', { hasText: 'A tool added later' }).waitFor();
      await web.shot('settings-mcp-pending');
      expect(web.kernel.registry.get('remote_second')).toBeUndefined();
      await web.page.getByRole('button', { name: 'Approve this definition' }).click();
      await expect.poll(() => web.kernel.registry.get('remote_second') !== undefined).toBe(true);
      await web.page.locator('.pending').waitFor({ state: 'detached' });
    } finally {
      await remote.close();
    }
  });

  it('a reader sees no private notebook anywhere, has no agent, and cannot edit', async () => {
    const web = await start({ width: 360, colorScheme: 'dark' });
    await notes(web);
    await web.signIn(READER);
    // Only one notebook is the reader's: it is open from the start.
    await web.page.getByRole('link', { name: 'Plans' }).waitFor();
    expect(await web.page.locator('nav.tree').innerText()).not.toContain('Diary');
    expect(await web.page.getByRole('link', { name: 'Agent' }).count()).toBe(0);
    await web.page.getByRole('link', { name: 'Plans' }).click();
    await web.page.getByRole('heading', { name: 'Plans', level: 1 }).waitFor();
    expect(await web.page.locator('button.edit').count()).toBe(0);
    await web.shot('reader-narrow-dark');
    await web.page.getByRole('link', { name: 'Search' }).click();
    await web.page.getByLabel('Search the notes').fill('zanzibarite');
    await web.page.getByRole('button', { name: 'Search' }).click();
    await web.page.getByText('0 results').waitFor();
    // Narrow screen: nothing wider than the window.
    expect(await web.page.evaluate('document.documentElement.scrollWidth <= innerWidth + 1')).toBe(true);
  });
});
