import { describe, expect, it } from 'vitest';
import { runCli } from '../../../core/cli/run-cli.js';
import { bufferIO } from '../../helpers/buffer-io.js';
import { REPO_ROOT } from '../../helpers/harness.js';

describe('quire command line', () => {
  it.each([['serve'], ['plugin', 'validate'], ['audit', 'verify']])('prints help for "%s" and exits 0', async (...command) => {
    const io = bufferIO();
    expect(await runCli([...command, '--help'], io)).toBe(0);
    expect(io.outText()).toContain(`Usage: quire ${command.join(' ')}`);
  });

  it('lists the commands on --help and exits 2 when given none', async () => {
    const help = bufferIO();
    expect(await runCli(['--help'], help)).toBe(0);
    expect(help.outText()).toContain('plugin validate');
    expect(await runCli([], bufferIO())).toBe(2);
  });

  it('exits 2 naming an unknown command or option', async () => {
    const unknown = bufferIO();
    expect(await runCli(['explode'], unknown)).toBe(2);
    expect(unknown.errText()).toContain("unknown command 'explode'");
    const partial = bufferIO();
    expect(await runCli(['plugin'], partial)).toBe(2);
    expect(partial.errText()).toContain('plugin validate');
    const option = bufferIO();
    expect(await runCli(['audit', 'verify', '--colour'], option)).toBe(2);
    expect(option.errText()).toContain('--colour');
    const port = bufferIO();
    expect(await runCli(['serve', '--port', 'eighty'], port)).toBe(2);
    expect(port.errText()).toContain('--port');
  });

  it('validates the native manifests and exits 0', async () => {
    const io = bufferIO();
    expect(await runCli(['plugin', 'validate', `${REPO_ROOT}/manifests`], io)).toBe(0);
    expect(io.outText()).toMatch(/0 problem\(s\)/);
  });

  it('reports a path that does not exist', async () => {
    const io = bufferIO();
    expect(await runCli(['plugin', 'validate', '/no/such/manifest.json'], io)).toBe(1);
    expect(io.errText()).toContain('/no/such/manifest.json: no such file');
  });

  it('exits 2 when auditing a workspace that does not exist', async () => {
    const io = bufferIO();
    expect(await runCli(['audit', 'verify', '--workspace', '/no/such/workspace'], io)).toBe(2);
  });
});
