import { createHash } from 'node:crypto';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpServer, type RunningServer } from '../../../core/http/serve.js';
import { runCli } from '../../../core/cli/run-cli.js';
import { bufferIO } from '../../helpers/buffer-io.js';
import { rawRequest, type RawResponse } from '../../helpers/http-client.js';
import { outsideWorkspace } from '../../../plugins/blocks/outside-workspace.js';
import { caught } from '../../helpers/harness.js';
import { useBlocks } from './blocks-harness.js';

const { boot, tempDir } = useBlocks();
const ADMIN = 'qk_nul-paths-admin';
const sha = (token: string): string => createHash('sha256').update(token).digest('hex');

/** Paths with a NUL byte in each place one can be: alone, first, in a folder that exists, last, after a dot. */
function hostilePaths(folder: string): string[] {
  return ['/\0', '\0/tmp', `${folder}\0`, `${folder}/\0`, `${folder}/a\0.md`, `${folder}/sub\0/a.md`, `${folder}/sub/\0\0`, `${folder}/a.md\0.txt`, `/tmp\0/../${folder}`, `${folder}/${'x'.repeat(300)}\0`];
}

describe('a NUL byte in an import or export path', () => {
  const servers: RunningServer[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close();
  });

  async function serve() {
    const booted = await boot({ config: { auth: { tokens: [{ name: 'admin', role: 'admin', sha256: sha(ADMIN) }] } } });
    const server = await startHttpServer(booted.kernel, { host: '127.0.0.1', port: 0 });
    servers.push(server);
    const call = (action: string, input: unknown, wait = true): Promise<RawResponse> => rawRequest(`${server.url}/api/actions/blocks/${action}`, {
      method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json', ...(wait ? { prefer: 'wait=30' } : {}) }, body: JSON.stringify(input),
    });
    return { ...booted, call };
  }

  const fieldOf = (answer: RawResponse): unknown => {
    const details = answer.json().error?.details as { field?: string; issues?: { pointer: string }[] } | undefined;
    return details?.field ?? details?.issues?.[0]?.pointer.replace(/^\//, '');
  };

  it('answers 400 naming the field, before any job starts, for import path and export folder', async () => {
    const { act, call } = await serve();
    const notebook = await act<{ id: string }>('notebook_create', { name: 'Target' });
    const folder = await tempDir('quire-nul-');
    await mkdir(join(folder, 'sub'));
    await writeFile(join(folder, 'a.md'), '# A\n');
    const answers: unknown[] = [];
    for (const path of hostilePaths(folder)) {
      for (const wait of [true, false]) {
        const imported = await call('import/markdown', { notebook: notebook.id, path }, wait);
        answers.push(['import', JSON.stringify(path), imported.status, imported.json().error?.code, fieldOf(imported)]);
        const exported = await call('export/markdown', { id: notebook.id, folder: path }, wait);
        answers.push(['export', JSON.stringify(path), exported.status, exported.json().error?.code, fieldOf(exported)]);
      }
    }
    expect(answers).toEqual(answers.map((answer) => {
      const [kind, path] = answer as [string, string];
      return [kind, path, 400, 'INVALID_INPUT', kind === 'import' ? 'path' : 'folder'];
    }));
    expect(answers).toHaveLength(40);
    // Nothing was written beside the hostile paths, and the notebook is still empty.
    expect((await readdir(folder)).sort()).toEqual(['a.md', 'sub']);
    expect(((await act<{ documents: unknown[] }>('document_list', { notebook: notebook.id })).documents)).toEqual([]);
  });

  it('answers a usage problem, not a crash, for quire import and export given such a path', async () => {
    const { kernel, act } = await boot();
    const notebook = await act<{ id: string }>('notebook_create', { name: 'Target' });
    const root = kernel.workspace.root;
    await kernel.close();
    for (const args of [['import', '/tmp/a\0.md', '--notebook', notebook.id, '--workspace', root], ['export', notebook.id, '/tmp/out\0', '--workspace', root]]) {
      const io = bufferIO();
      const code = await runCli(args, io);
      expect(code).not.toBe(0);
      expect(io.errText()).toMatch(args[0] === 'import' ? /INVALID_INPUT.*path/ : /INVALID_INPUT.*folder/);
    }
  });

  it('refuses a NUL byte where the path meets the file system, whoever calls', async () => {
    const root = await tempDir('quire-root-');
    for (const path of hostilePaths(root)) {
      const error = await caught(outsideWorkspace(path, root, 'path'));
      expect([JSON.stringify(path), error.code, error.details?.field]).toEqual([JSON.stringify(path), 'INVALID_INPUT', 'path']);
    }
  });

  it('answers below 500 for a NUL byte in any id of a route', async () => {
    const { call } = await serve();
    const url = servers[0]!.url;
    const nul = 'a%00b';
    const session = '20260101000000-abcdefg';
    const routes: [string, string][] = [
      ['GET', `/api/confirmations/${nul}`], ['POST', `/api/confirmations/${nul}/answer`], ['DELETE', `/api/grants/${nul}`],
      ['GET', `/api/jobs/${nul}`], ['POST', `/api/jobs/${nul}/cancel`], ['GET', `/api/jobs/${nul}/events`],
      ['POST', `/api/mcp/servers/${nul}/tools/${nul}/approve`], ['PUT', `/api/plugins/${nul}`],
      ['GET', `/api/agent/sessions/${nul}`], ['PUT', `/api/agent/sessions/${nul}`], ['DELETE', `/api/agent/sessions/${nul}`],
      ['POST', `/api/agent/sessions/${nul}/turns`], ['POST', `/api/agent/sessions/${session}/turns/${nul}/rollback`],
      ['POST', `/api/agent/sessions/${nul}/turns/cancel`], ['GET', `/api/agent/sessions/${nul}/pending`],
      ['POST', `/api/agent/sessions/${session}/confirmations/${nul}/answer`], ['POST', `/api/agent/sessions/${session}/questions/${nul}/answer`],
      ['PUT', `/api/agent/sessions/${nul}/mode`], ['POST', `/api/actions/${nul}/${nul}/${nul}`], ['POST', `/api/actions/blocks/document/${nul}`],
    ];
    const bodies: Record<string, string> = { PUT: '{"enabled":true,"entries":[],"mode":"auto"}', POST: '{"message":"hi","approved":true,"argsHash":"x","answers":[],"hash":"x"}' };
    const statuses: [string, string, number][] = [];
    for (const [method, path] of routes) {
      const answer = await rawRequest(`${url}${path}`, { method, headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, ...(bodies[method] ? { body: bodies[method] } : {}) });
      statuses.push([method, path, answer.status]);
    }
    expect(statuses.filter(([, , status]) => status >= 500)).toEqual([]);
    expect((await call('document/get', { id: 'a\0b' })).status).toBe(400);
  });
});
