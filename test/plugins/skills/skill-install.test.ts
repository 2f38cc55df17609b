import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import type { ErrorCode } from '../../../core/errors.js';
import { HTTP_STATUS } from '../../../core/http/status-table.js';
import { caught } from '../../helpers/harness.js';
import { agent } from '../blocks/blocks-harness.js';
import { makeTarGz, makeZip } from './archive-builders.js';
import { filesUnder, skillMd, useSkills, writeTree } from './skills-harness.js';

const { boot, tempDir } = useSkills();
const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

/** A loopback file server: path → body (status 404 for anything else). */
async function serve(files: Record<string, Buffer | string>): Promise<string> {
  const server = createServer((request, response) => {
    const body = files[request.url ?? ''];
    if (body === undefined) return response.writeHead(404).end('not here');
    response.writeHead(200, { 'content-type': 'application/octet-stream' }).end(body);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A loopback port nothing listens on (a server opened and closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const md = (name: string, description = `The ${name} skill.`) => skillMd(`name: ${name}\ndescription: ${description}`);

describe('installing skills', () => {
  it('installs every skill of a GitHub-style zip (one top folder), ignoring files outside skills, and lists what it wrote', async () => {
    const dir = await tempDir();
    const { kernel, skill } = await boot({}, join(dir, 'ws'));
    await writeFile(join(dir, 'repo.zip'), makeZip([
      { name: 'repo-main/README.md', data: '# repo' },
      { name: 'repo-main/skills/alpha/SKILL.md', data: md('alpha') },
      { name: 'repo-main/skills/alpha/refs/guide.md', data: 'guide' },
      { name: 'repo-main/skills/beta/SKILL.md', data: md('beta') },
      { name: '__MACOSX/repo-main/._README.md', data: 'junk' },
    ]));
    const dry = await skill<{ dryRun: boolean; wouldWrite: { name: string; files: string[] }[] }>('install', { path: join(dir, 'repo.zip'), dryRun: true });
    expect(dry.wouldWrite.map((entry) => [entry.name, entry.files])).toEqual([['alpha', ['SKILL.md', 'refs/guide.md']], ['beta', ['SKILL.md']]]);
    expect(await filesUnder(join(kernel.workspace.root, 'skills'))).toEqual([]);
    const done = await skill<{ installed: { name: string; folder: string; files: string[]; replaced: boolean }[]; ignored: string[]; updatedBy: string }>('install', { path: join(dir, 'repo.zip') });
    expect(done.installed.map((entry) => [entry.folder, entry.files, entry.replaced])).toEqual([['skills/alpha', ['SKILL.md', 'refs/guide.md'], false], ['skills/beta', ['SKILL.md'], false]]);
    expect(done.ignored.sort()).toEqual(['__MACOSX/repo-main/._README.md', 'repo-main/README.md']);
    expect(done.updatedBy).toBe('person:alice');
    expect(await filesUnder(join(kernel.workspace.root, 'skills'))).toEqual(['alpha/SKILL.md', 'alpha/refs/guide.md', 'beta/SKILL.md']);
    expect(await readFile(join(kernel.workspace.root, 'skills/alpha/refs/guide.md'), 'utf8')).toBe('guide');
    const list = await skill<{ skills: { name: string; updatedBy?: string }[] }>('list');
    expect(list.skills.map((entry) => [entry.name, entry.updatedBy])).toEqual([['alpha', 'person:alice'], ['beta', 'person:alice']]);
  });

  it('refuses to replace an existing skill unless asked, and with replace swaps the whole folder', async () => {
    const dir = await tempDir();
    const { kernel, skill } = await boot({}, join(dir, 'ws'));
    await writeTree(join(kernel.workspace.root, 'skills'), { 'alpha/SKILL.md': md('alpha', 'Old.'), 'alpha/old.md': 'old' });
    await writeFile(join(dir, 'alpha.tar.gz'), makeTarGz([{ name: 'alpha/SKILL.md', data: md('alpha', 'New.') }, { name: 'alpha/new.md', data: 'new' }]));
    const refused = await caught(skill('install', { path: join(dir, 'alpha.tar.gz') }));
    expect([refused.code, refused.details?.problem]).toEqual(['CONFLICT', 'SKILL_EXISTS']);
    expect(await filesUnder(join(kernel.workspace.root, 'skills'))).toEqual(['alpha/SKILL.md', 'alpha/old.md']);
    const done = await skill<{ installed: { replaced: boolean }[] }>('install', { path: join(dir, 'alpha.tar.gz'), replace: true });
    expect(done.installed[0]!.replaced).toBe(true);
    expect(await filesUnder(join(kernel.workspace.root, 'skills'))).toEqual(['alpha/SKILL.md', 'alpha/new.md']);
  });

  it('installs from a URL (a zip, or a lone SKILL.md) and says what went wrong with a 404 or an oversized download', async () => {
    const dir = await tempDir();
    const { kernel, skill } = await boot({ maxArchiveBytes: 4096 }, join(dir, 'ws'));
    const url = await serve({ '/gamma.zip': makeZip([{ name: 'SKILL.md', data: md('gamma') }]), '/delta/SKILL.md': md('delta'), '/huge.zip': Buffer.alloc(10_000, 1) });
    const zipped = await skill<{ installed: { name: string; files: string[] }[] }>('install_url', { url: `${url}/gamma.zip` });
    expect(zipped.installed).toMatchObject([{ name: 'gamma', files: ['SKILL.md'] }]);
    await skill('install_url', { url: `${url}/delta/SKILL.md` });
    expect(await filesUnder(join(kernel.workspace.root, 'skills'))).toEqual(['delta/SKILL.md', 'gamma/SKILL.md']);
    // The server's failure is a bad gateway (502), not a bad request: the URL was fine to ask for.
    const missing = await caught(skill('install_url', { url: `${url}/missing.zip` }));
    expect([missing.code, HTTP_STATUS[missing.code as ErrorCode], missing.details]).toEqual(['UPSTREAM_FAILED', 502, expect.objectContaining({ problem: 'DOWNLOAD_FAILED', status: 404 })]);
    const closed = await closedPort();
    const refused = await caught(skill('install_url', { url: `http://127.0.0.1:${closed}/x.zip` }));
    expect([refused.code, refused.details?.problem, refused.message]).toEqual(['UPSTREAM_FAILED', 'DOWNLOAD_FAILED', expect.stringContaining('ECONNREFUSED')]);
    expect((await caught(skill('install_url', { url: `${url}/huge.zip` }))).details?.problem).toBe('ARCHIVE_TOO_LARGE');
    const notHttp = await caught(skill('install_url', { url: 'file:///etc/passwd' }));
    expect([notHttp.code, notHttp.details?.problem]).toEqual(['INVALID_INPUT', 'DOWNLOAD_FAILED']);
    // A .tar.gz served as it is with Content-Encoding: gzip (a common server setting) was unpacked on the way, then refused as no archive.
    const encoded = createServer((_request, response) => response.writeHead(200, { 'content-type': 'application/gzip', 'content-encoding': 'gzip' }).end(makeTarGz([{ name: 'SKILL.md', data: md('epsilon') }])));
    servers.push(encoded);
    await new Promise<void>((resolve) => encoded.listen(0, '127.0.0.1', resolve));
    await skill('install_url', { url: `http://127.0.0.1:${(encoded.address() as AddressInfo).port}/epsilon.tar.gz` });
    expect(await filesUnder(join(kernel.workspace.root, 'skills'))).toContain('epsilon/SKILL.md');
    // A plain .tar (no gzip) is read as a .tar.gz's contents are; it was refused as no archive.
    const plain = await serve({ '/zeta.tar': gunzipSync(makeTarGz([{ name: 'SKILL.md', data: md('zeta') }])) });
    await skill('install_url', { url: `${plain}/zeta.tar` });
    expect(await filesUnder(join(kernel.workspace.root, 'skills'))).toContain('zeta/SKILL.md');
    const records = JSON.parse(await readFile(join(kernel.workspace.root, 'agent/skills.json'), 'utf8')) as { skills: Record<string, { source: string }> };
    expect(records.skills.gamma!.source).toBe(`${url}/gamma.zip`);
  });
});

describe('saving, renaming and removing', () => {
  it('marks what the agent saved as agent:<session>/<turn>/<call>, whatever the front matter claims, until the file is edited by hand', async () => {
    const dir = await tempDir();
    const { kernel, skill } = await boot({}, join(dir, 'ws'));
    const content = skillMd('name: notes-style\ndescription: How this person likes notes.\nupdatedBy: person:alice', '# Style\n\nShort lines.\n');
    const saved = await skill<{ updatedBy: string; replaced: boolean; written: string[] }>('save', { name: 'notes-style', content, files: { 'examples/one.md': 'one' } }, agent('s1', 't1', 'c1'));
    expect(saved).toMatchObject({ updatedBy: 'agent:s1/t1/c1', replaced: false, written: ['SKILL.md', 'examples/one.md'] });
    const listed = async () => (await skill<{ skills: { name: string; updatedBy?: string }[] }>('list')).skills.find((entry) => entry.name === 'notes-style')!.updatedBy;
    expect(await listed()).toBe('agent:s1/t1/c1');
    // A save that changes only SKILL.md keeps the other files.
    const again = await skill<{ kept: string[]; replaced: boolean }>('save', { name: 'notes-style', content: content.replace('Short', 'Very short') }, agent('s1', 't2', 'c1'));
    expect(again).toMatchObject({ kept: ['examples/one.md'], replaced: true });
    expect(await listed()).toBe('agent:s1/t2/c1');
    await writeFile(join(kernel.workspace.root, 'skills/notes-style/SKILL.md'), content.replace('Short', 'Edited by hand'));
    expect(await listed()).toBe('changed on disk');
  });

  it('runs two saves of one skill one after the other, so neither drops the file the other added', async () => {
    const { kernel, skill } = await boot();
    const content = md('pair');
    await skill('save', { name: 'pair', content });
    await Promise.all([
      skill('save', { name: 'pair', content, files: { 'one.md': '1' } }, agent('s1', 't1', 'c1')),
      skill('save', { name: 'pair', content, files: { 'two.md': '2' } }, agent('s2', 't1', 'c1')),
    ]);
    expect(await filesUnder(join(kernel.workspace.root, 'skills'))).toEqual(['pair/SKILL.md', 'pair/one.md', 'pair/two.md']);
  });

  it('refuses an archive naming one file twice under two spellings', async () => {
    const dir = await tempDir();
    const { skill } = await boot({}, join(dir, 'ws'));
    await writeFile(join(dir, 'twice.zip'), makeZip([{ name: 'x/SKILL.md', data: md('x') }, { name: 'x/a.md', data: '1' }, { name: 'x/./a.md', data: '2' }]));
    expect((await caught(skill('install', { path: join(dir, 'twice.zip') }))).details?.problem).toBe('PATH_DUPLICATE');
  });

  it('refuses a save whose front-matter name differs from the name given', async () => {
    const { skill } = await boot();
    const error = await caught(skill('save', { name: 'one', content: md('two') }));
    expect(error.details?.problem).toBe('NAME_FOLDER_MISMATCH');
  });

  it('renames folder and front matter (comments kept), and removes a skill; skills from extra folders are read only', async () => {
    const dir = await tempDir();
    const extra = join(dir, 'extra');
    await writeTree(extra, { 'shared/SKILL.md': md('shared') });
    const { kernel, skill } = await boot({ paths: [extra] }, join(dir, 'ws'));
    await writeTree(join(kernel.workspace.root, 'skills'), { 'old-name/SKILL.md': '---\n# kept comment\nname: old-name\ndescription: Renamed.\nlicense: MIT\n---\n\nBody.\n', 'old-name/ref.md': 'r' });
    await skill('rename', { name: 'old-name', newName: 'new-name' });
    expect(await filesUnder(join(kernel.workspace.root, 'skills'))).toEqual(['new-name/SKILL.md', 'new-name/ref.md']);
    expect(await readFile(join(kernel.workspace.root, 'skills/new-name/SKILL.md'), 'utf8')).toBe('---\n# kept comment\nname: new-name\ndescription: Renamed.\nlicense: MIT\n---\n\nBody.\n');
    expect((await caught(skill('rename', { name: 'new-name', newName: 'Bad Name' }))).details?.problem).toBe('NAME_INVALID');
    expect((await caught(skill('remove', { name: 'shared' }))).details?.problem).toBe('READ_ONLY_SKILL');
    expect((await caught(skill('remove', { name: 'nothing' }))).code).toBe('NOT_FOUND');
    const removed = await skill<{ files: string[] }>('remove', { name: 'new-name' });
    expect(removed.files).toEqual(['SKILL.md', 'ref.md']);
    expect(await readdir(join(kernel.workspace.root, 'skills'))).toEqual([]);
  });

  it('puts back a skill moved aside by a write that a crash interrupted, and clears the staging folder', async () => {
    const dir = await tempDir();
    const root = join(dir, 'ws');
    await writeTree(join(root, '.skills-staging-abc/old'), { 'kept/SKILL.md': md('kept') });
    await writeTree(join(root, '.skills-staging-abc/new'), { 'half/SKILL.md': md('half') });
    await mkdir(join(root, 'skills'), { recursive: true });
    const { skill } = await boot({}, root);
    expect((await skill<{ skills: { name: string }[] }>('list')).skills.map((entry) => entry.name)).toEqual(['kept']);
    expect((await readdir(root)).filter((name) => name.startsWith('.skills-staging'))).toEqual([]);
  });
});
