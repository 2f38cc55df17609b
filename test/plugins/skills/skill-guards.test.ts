import dns, { type LookupAddress, type LookupOneOptions } from 'node:dns';
import { mkdir, writeFile } from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createHttpApp } from '../../../core/http/app.js';
import { SKILLS_LISTING, type SkillsListingSource } from '../../../core/turn/skills-listing.js';
import { checkRedirect, isInternalAddress } from '../../../plugins/skills/redirect-check.js';
import { limitsFrom } from '../../../plugins/skills/skill-limits.js';
import { SkillVersions } from '../../../plugins/skills/skill-versions.js';
import { SKILLS_WRITES, type SkillsWrites } from '../../../plugins/skills/tokens.js';
import { caught } from '../../helpers/harness.js';
import { reader } from '../blocks/blocks-harness.js';
import { filesUnder, skillMd, useSkills, writeTree } from './skills-harness.js';

const helpers = useSkills();
const { boot } = helpers;

interface Versions { versions: { version: string; op: string }[] }

describe('skill writes that must not lose or leak anything', () => {
  it('refuses to rename a skill onto a broken one (its folder was swapped away, no version kept), and removes a broken skill keeping a version', async () => {
    const { kernel, skill } = await boot();
    const skills = join(kernel.workspace.root, 'skills');
    await skill('save', { name: 'alpha', content: skillMd('name: alpha\ndescription: The first.') });
    await writeTree(join(skills, 'beta'), { 'SKILL.md': 'no front matter here\n', 'notes.md': 'kept notes' });
    const refused = await caught(skill('rename', { name: 'alpha', newName: 'beta' }));
    expect([refused.code, refused.message]).toEqual(['CONFLICT', expect.stringContaining("a skill named 'beta' already exists (it is broken")]);
    expect(await filesUnder(join(skills, 'beta'))).toEqual(['SKILL.md', 'notes.md']);
    // Removed with the tool (it answered "broken", not found), its files kept as a version.
    const removed = await skill<{ removed: string; files: string[]; version?: string }>('remove', { name: 'beta' });
    expect([removed.removed, removed.files.sort(), typeof removed.version]).toEqual(['beta', ['SKILL.md', 'notes.md'], 'string']);
    expect(await filesUnder(join(skills, 'beta'))).toEqual([]);
    expect((await skill<Versions>('versions', { name: 'beta' })).versions.map((version) => version.op)).toEqual(['remove']);
  });

  it('writes nothing for an install stopped while it waited for its turn (it was told cancelled and wrote anyway)', async () => {
    const { kernel } = await boot();
    const source = join(kernel.workspace.root, '..', 'waiting');
    await mkdir(source, { recursive: true });
    await writeFile(join(source, 'SKILL.md'), skillMd('name: waiting\ndescription: Waits.'));
    const writes = kernel.container.resolve<SkillsWrites>(SKILLS_WRITES);
    let release!: () => void;
    const held = writes.exclusive(() => new Promise<void>((resolve) => { release = resolve; }));
    const controller = new AbortController();
    const call = kernel.pipeline.call({ target: 'skill_install', input: { path: source }, principal: { kind: 'person', name: 'alice', role: 'admin' }, signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 200));
    controller.abort();
    // Its turn comes after the stop is noticed (the pipeline looks every 20 ms): the write must see it there.
    await new Promise((resolve) => setTimeout(resolve, 200));
    release();
    const outcome = await call.catch((error: unknown) => error);
    await held;
    await writes.exclusive(async () => undefined);
    expect(outcome).toMatchObject({ code: 'ACTION_CANCELLED' });
    expect(await filesUnder(join(kernel.workspace.root, 'skills'))).toEqual([]);
  });

  it("are the agent's instructions, which a reader may not read: 403, and x-quire-role admin for every adminOnly read", async () => {
    const { kernel, skill } = await boot();
    await skill('save', { name: 'alpha', content: skillMd('name: alpha\ndescription: The first.') });
    for (const action of ['list', 'load', 'versions']) {
      const refused = await caught(skill(action, action === 'load' ? { name: 'alpha' } : {}, reader));
      expect([action, refused.code, refused.message]).toEqual([action, 'FORBIDDEN', expect.stringContaining(`skill_${action} is for administrators and the agent`)]);
    }
    const app = createHttpApp(kernel);
    const document = await (await app.request('/api/openapi.json')).json() as { paths: Record<string, { post?: { 'x-quire-role'?: string } }> };
    const roles = Object.fromEntries(['/api/actions/sql/sql/query', '/api/actions/snapshots/snapshot/list', '/api/actions/skills/skill/list', '/api/actions/search-fulltext/search/fulltext']
      .map((path) => [path, document.paths[path]?.post?.['x-quire-role']]));
    expect(roles).toEqual({ '/api/actions/sql/sql/query': 'admin', '/api/actions/snapshots/snapshot/list': 'admin', '/api/actions/skills/skill/list': 'admin', '/api/actions/search-fulltext/search/fulltext': 'reader' });
  });

  it('keeps listing the skills that fit when the newest one does not (one huge description left every skill out)', async () => {
    const { kernel, skill } = await boot({ promptTokenBudget: 300 });
    for (const name of ['aa', 'bb', 'cc']) await skill('save', { name, content: skillMd(`name: ${name}\ndescription: Short words for ${name}.`) });
    await skill('save', { name: 'zz', content: skillMd(`name: zz\ndescription: ${'\u{1F600}'.repeat(500)}`) });
    const listing = await kernel.container.resolve<SkillsListingSource>(SKILLS_LISTING).promptListing();
    expect(listing.map((entry) => entry.name).sort()).toEqual(['aa', 'bb', 'cc']);
    expect((await skill<{ leftOutOfPrompt: string[] }>('list')).leftOutOfPrompt).toEqual(['zz']);
  });

  it('refuses what it cannot keep or read back, each with its problem named: big files, alias bombs, long paths, odd names, control characters', async () => {
    const { kernel, skill } = await boot({ maxFileBytes: 2048 });
    const folder = join(kernel.workspace.root, '..', 'pack');
    await writeTree(folder, { 'SKILL.md': skillMd('name: pack\ndescription: A pack.'), 'ref.md': 'x'.repeat(5000) });
    const big = await caught(skill('install', { path: folder }));
    expect([big.code, big.details?.problem, big.message]).toEqual(['INVALID_INPUT', 'FILE_TOO_LARGE', expect.stringContaining("'ref.md' of the skill 'pack' is 5000 bytes, more than the 2048")]);
    const saved = await caught(skill('save', { name: 'pack', content: skillMd('name: pack\ndescription: A pack.'), files: { 'ref.md': 'x'.repeat(5000) } }));
    expect(saved.details?.problem).toBe('FILE_TOO_LARGE');
    // A file that is not text (a template, an image) is never loaded: only the skill's size bounds it.
    const binary = join(kernel.workspace.root, '..', 'binary');
    await writeTree(binary, { 'SKILL.md': skillMd('name: binary\ndescription: A template.'), 'template.pptx': Buffer.alloc(5000, 0) });
    await skill('install', { path: binary });
    await skill('remove', { name: 'binary' });
    const laughs = ['a: &a [x, x, x, x, x, x, x, x, x]', ...Array.from({ length: 8 }, (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [*${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}]`)].join('\n');
    const bomb = await caught(skill('save', { name: 'bomb', content: `---\nname: bomb\ndescription: Boom.\n${laughs}\n---\n\nBody\n` }));
    expect([bomb.code, bomb.details?.problem]).toEqual(['INVALID_INPUT', 'YAML_INVALID']);
    const deep = Array.from({ length: 20 }, () => 'd'.repeat(60)).join('/');
    expect((await caught(skill('save', { name: 'deep', content: skillMd('name: deep\ndescription: Deep.'), files: { [`${deep}/f.md`]: 'x' } }))).details?.problem).toBe('PATH_INVALID');
    const odd = join(kernel.workspace.root, '..', 'odd');
    await writeTree(odd, { 'SKILL.md': skillMd('name: odd\ndescription: Odd.'), 'a\\b.md': 'x' });
    expect((await caught(skill('install', { path: odd }))).details?.problem).toBe('PATH_INVALID');
    expect(await filesUnder(join(kernel.workspace.root, 'skills'))).toEqual([]);
    // A description's escape sequence or direction override is shown as U+FFFD; the marks of mixed
    // right-to-left text stay, and neither makes the skill broken.
    await skill('save', { name: 'esc', content: skillMd('name: esc\ndescription: "Fine \\e[8m hidden \\u202e, for \\u200fעברית\\u200e Docs"') });
    const listed = await skill<{ skills: { name: string; description: string }[] }>('list');
    expect(listed.skills.find((entry) => entry.name === 'esc')?.description).toBe('Fine \ufffd[8m hidden \ufffd, for \u200fעברית\u200e Docs');
    // Nor does one let a description past its 1,024 characters.
    const long = await caught(skill('save', { name: 'long', content: skillMd(`name: long\ndescription: "\\e${'x'.repeat(1100)}"`) }));
    expect([long.code, long.details?.problem]).toEqual(['INVALID_INPUT', 'DESCRIPTION_TOO_LONG']);
  });

  it('follows a download\'s redirects only where the URL approved could lead: no internal address from the internet, no downgrade, five at most', async () => {
    for (const address of ['127.0.0.1', '10.1.2.3', '172.20.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '255.255.255.255', '::1', 'fd00::1', 'fe80::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::7f00:1', '64:ff9b::a9fe:a9fe', '2002:7f00:1::']) {
      expect([address, isInternalAddress(address)]).toEqual([address, true]);
    }
    for (const address of ['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:4700::1']) expect([address, isInternalAddress(address)]).toEqual([address, false]);
    const from = new URL('https://skills.example.org/pack.zip');
    // An approved URL on the internet sent the request on to this machine's admin routes, or the metadata service.
    // The URL parser writes [::ffff:127.0.0.1] as [::ffff:7f00:1], which a test of the text let through.
    for (const to of ['http://127.0.0.1:8080/admin/delete', 'https://169.254.169.254/latest/meta-data', 'https://[::1]/x', 'https://localhost/x', 'https://[::ffff:127.0.0.1]/admin', 'https://[::ffff:a9fe:a9fe]/latest', 'https://2130706433/x']) {
      expect((await caught(() => checkRedirect(from, new URL(to), false))).details?.problem, to).toBe('DOWNLOAD_FAILED');
    }
    expect((await caught(() => checkRedirect(from, new URL('http://93.184.216.34/pack.zip'), false))).message).toContain('from https down to http');
    expect((await caught(() => checkRedirect(from, new URL('ftp://93.184.216.34/pack.zip'), false))).message).toContain('only http and https');
    checkRedirect(from, new URL('https://93.184.216.34/pack.zip'), false);
    // A URL of this machine may lead to another of its addresses (a local mirror); a loop ends.
    checkRedirect(new URL('http://127.0.0.1:1/a'), new URL('http://127.0.0.1:2/b'), true);
    const server = createServer((request, response) => response.writeHead(302, { location: `/again${request.url}` }).end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { skill } = await boot();
      const looped = await caught(skill('install_url', { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/pack.zip` }));
      expect([looped.details?.problem, looped.message]).toEqual(['DOWNLOAD_FAILED', expect.stringContaining('redirects more than 5 times')]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('checks the address a redirected download connects to, not one a name resolved to before (DNS rebinding)', async () => {
    const hits: string[] = [];
    const inside = createServer((request, response) => { hits.push(request.url ?? ''); response.writeHead(200).end('the admin page'); });
    await new Promise<void>((resolve) => inside.listen(0, '127.0.0.1', resolve));
    const insidePort = (inside.address() as AddressInfo).port;
    const outside = createServer((_request, response) => response.writeHead(302, { location: `http://rebind.test:${insidePort}/admin` }).end());
    await new Promise<void>((resolve) => outside.listen(0, '127.0.0.1', resolve));
    // A rebinding name server: rebind.test is on the internet when asked to check it, this machine when asked to connect.
    // start.test stands for the approved URL's host on the internet (here on loopback: the approved URL is not checked).
    const connectLookup = dns.lookup;
    const checkLookup = dns.promises.lookup;
    const here = (host: string) => host === 'rebind.test' || host === 'start.test';
    const rebound = ((host: string, options: LookupOneOptions | ((...args: unknown[]) => void), callback?: (...args: unknown[]) => void) => {
      const done = (typeof options === 'function' ? options : callback)!;
      const all = typeof options === 'object' && (options as { all?: boolean }).all === true;
      if (!here(host)) return (connectLookup as (...args: unknown[]) => void)(host, options, callback);
      return all ? done(null, [{ address: '127.0.0.1', family: 4 }]) : done(null, '127.0.0.1', 4);
    }) as typeof dns.lookup;
    const checked = (async (host: string, options?: unknown) => (host === 'rebind.test' ? [{ address: '93.184.216.34', family: 4 }] satisfies LookupAddress[] : checkLookup(host, options as LookupOneOptions))) as typeof dns.promises.lookup;
    dns.lookup = rebound;
    dns.promises.lookup = checked;
    syncBuiltinESMExports();
    try {
      const { skill } = await boot();
      const refused = await caught(skill('install_url', { url: `http://start.test:${(outside.address() as AddressInfo).port}/pack.zip` }));
      expect(hits).toEqual([]);
      expect([refused.details?.problem, refused.message]).toEqual(['DOWNLOAD_FAILED', expect.stringContaining('rebind.test resolves to 127.0.0.1')]);
    } finally {
      dns.lookup = connectLookup;
      dns.promises.lookup = checkLookup;
      syncBuiltinESMExports();
      await new Promise((resolve) => inside.close(resolve));
      await new Promise((resolve) => outside.close(resolve));
    }
  });

  it("drops a removed skill's versions past their age too (only a new version of the same skill pruned them)", async () => {
    const { tempDir } = helpers;
    const root = await tempDir();
    const skills = join(root, 'skills');
    const versions = new SkillVersions(join(root, 'history', 'skills'), skills, limitsFrom({}), { maxVersions: 20, maxAgeDays: 90 });
    await writeTree(join(skills, 'old'), { 'SKILL.md': skillMd('name: old\ndescription: Old.') });
    await writeTree(join(skills, 'kept'), { 'SKILL.md': skillMd('name: kept\ndescription: Kept.') });
    await versions.keep('old', 'remove', 'person:alice', new Date(Date.now() - 200 * 86_400_000));
    await versions.keep('kept', 'remove', 'person:alice');
    expect((await versions.skills()).map((skill) => skill.name)).toEqual(['kept', 'old']);
    await versions.pruneAll(new Date());
    expect((await versions.skills()).map((skill) => skill.name)).toEqual(['kept']);
    expect(await filesUnder(join(root, 'history', 'skills'))).toEqual([expect.stringMatching(/^kept\/\d{8}T\d{9}Z-remove\.json$/)]);
  });
});
