// `quire models pull` and `quire models list` from the command line, against a loopback stand-in of the Hub.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../core/cli/run-cli.js';
import { generateTinyBertModel } from '../../fakes/onnx-model/generate.js';
import { bufferIO } from '../../helpers/buffer-io.js';
import { ModelHost } from './model-host.js';

let root: string;
let host: ModelHost;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'quire-models-cli-'));
  await generateTinyBertModel(join(root, 'hub', 'test-org', 'tiny-reranker'), { kind: 'cross-encoder', seed: 8, cjk: false });
  host = await ModelHost.start(join(root, 'hub'));
});

afterAll(async () => {
  await host.close();
  await rm(root, { recursive: true, force: true });
});

describe('quire models', () => {
  it('pulls a model into the workspace, shows progress, and lists it', async () => {
    const workspace = join(root, 'pulled');
    // A mistyped workspace is said, and nothing is made there (a models folder was).
    const typo = bufferIO();
    expect(await runCli(['models', 'pull', 'test-org/tiny-reranker', '--workspace', `${workspace}-typo`, '--remote-host', host.url], typo)).toBe(1);
    expect(typo.errText()).toContain(`there is no workspace at ${workspace}-typo`);
    expect(existsSync(`${workspace}-typo`)).toBe(false);
    await mkdir(workspace, { recursive: true });
    const io = bufferIO();
    expect(await runCli(['models', 'pull', 'test-org/tiny-reranker', '--workspace', workspace, '--remote-host', host.url], io)).toBe(0);
    expect(io.outText()).toContain(`pulling test-org/tiny-reranker from ${host.url}`);
    expect(io.outText()).toMatch(/downloaded test-org\/tiny-reranker \(4 files, [\d.]+ MB\)/);
    expect(io.errText()).toContain('onnx/model.onnx');
    expect(existsSync(join(workspace, 'models', 'test-org', 'tiny-reranker', 'onnx', 'model.onnx'))).toBe(true);

    const again = bufferIO();
    expect(await runCli(['models', 'pull', 'test-org/tiny-reranker', '-w', workspace, '--remote-host', host.url], again)).toBe(0);
    expect(again.outText()).toContain('already there: test-org/tiny-reranker');

    const list = bufferIO();
    expect(await runCli(['models', 'list', '-w', `${workspace}-typo`], bufferIO())).toBe(1);
    expect(await runCli(['models', 'list', '-w', workspace], list)).toBe(0);
    expect(list.outText()).toMatch(/^test-org\/tiny-reranker {2}[\d.]+ MB {2}onnx\/model\.onnx$/);
  });

  it('takes the host from quire.json when the command line names none', async () => {
    const workspace = join(root, 'configured');
    await mkdir(workspace, { recursive: true });
    await writeFile(join(workspace, 'quire.json'), JSON.stringify({ plugins: { 'local-models': { config: { remoteHost: host.url } } } }));
    const io = bufferIO();
    expect(await runCli(['models', 'pull', 'test-org/tiny-reranker', '-w', workspace], io)).toBe(0);
    expect(io.outText()).toContain(`from ${host.url}`);
    // A host holding a password is refused without the password being repeated anywhere.
    const secret = bufferIO();
    expect(await runCli(['models', 'pull', 'test-org/not-pulled-yet', '-w', workspace, '--remote-host', host.url.replace('://', '://me:s3cret@')], secret)).toBe(1);
    expect([secret.errText(), secret.outText()].join('\n')).not.toContain('s3cret');
    expect(secret.errText()).toContain('holds a user name or password');
    // Nor where the host is not even a URL (it was repeated whole, password and all).
    const broken = bufferIO();
    expect(await runCli(['models', 'pull', 'test-org/not-pulled-yet', '-w', workspace, '--remote-host', 'https://me:s3cret@exa mple.com'], broken)).toBe(1);
    expect([broken.errText(), broken.outText()].join('\n')).not.toContain('s3cret');
  });

  it('exits 1 with a clear message for a model the host does not have, and leaves no folder', async () => {
    const workspace = join(root, 'missing');
    await mkdir(workspace, { recursive: true });
    const io = bufferIO();
    expect(await runCli(['models', 'pull', 'test-org/nothing-here', '-w', workspace, '--remote-host', host.url], io)).toBe(1);
    expect(io.errText()).toContain("quire models pull: NOT_FOUND: model 'test-org/nothing-here' was not found at");
    expect(await readdir(join(workspace, 'models'))).toEqual([]);
    const list = bufferIO();
    expect(await runCli(['models', 'list', '-w', workspace], list)).toBe(0);
    expect(list.outText()).toContain('no models');
  });

  it('exits 2 for a command line it cannot use', async () => {
    for (const args of [['models', 'pull'], ['models', 'pull', 'a/b', 'c/d'], ['models', 'pull', 'a/b', '--dtype', 'fp64'], ['models', 'pull', 'a/b', '--unknown']]) {
      const io = bufferIO();
      expect(await runCli(args, io), args.join(' ')).toBe(2);
    }
    const help = bufferIO();
    expect(await runCli(['models', 'pull', '--help'], help)).toBe(0);
    expect(help.outText()).toContain('Usage: quire models pull <org/name>');
  });
});
