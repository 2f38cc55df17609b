import { readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../../core/cli/run-cli.js';
import type { Principal } from '../../../core/plugin-api.js';
import { Kernel } from '../../../core/kernel.js';
import { bufferIO } from '../../helpers/buffer-io.js';
import { caught, useHarness } from '../../helpers/harness.js';

const admin: Principal = { kind: 'person', name: 'admin', role: 'admin' };

describe('audit log', () => {
  const harness = useHarness();

  async function kernelWithWrites(count: number): Promise<Kernel> {
    const kernel = await harness.boot({ plugins: ['notes'] });
    for (let i = 0; i < count; i++) {
      await kernel.pipeline.call({ target: 'note_put', input: { name: `n${i}`, text: `text ${i}` }, principal: admin });
    }
    return kernel;
  }

  async function verifyWithCli(workspace: string): Promise<{ code: number; text: string }> {
    const io = bufferIO();
    const code = await runCli(['audit', 'verify', '--workspace', workspace], io);
    return { code, text: `${io.outText()}\n${io.errText()}` };
  }

  it('chains each line to the one before, and verifies intact', async () => {
    const kernel = await kernelWithWrites(4);
    const lines = (await readFile(kernel.audit.logFile, 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as { seq: number; prev: string; hash: string });
    expect(lines.map((line) => line.seq)).toEqual([1, 2, 3, 4]);
    expect(lines[0]?.prev).toBe('0'.repeat(64));
    for (let i = 1; i < lines.length; i++) expect(lines[i]?.prev).toBe(lines[i - 1]?.hash);
    expect(await kernel.audit.verify()).toMatchObject({ ok: true, lines: 4 });
    expect(await verifyWithCli(kernel.workspace.root)).toMatchObject({ code: 0 });
  });

  it('continues the chain across a restart', async () => {
    const options = await harness.kernelOptions({ plugins: ['notes'] });
    for (const name of ['a', 'b']) {
      const kernel = await Kernel.boot(options);
      await kernel.pipeline.call({ target: 'note_put', input: { name, text: name }, principal: admin });
      await kernel.close();
    }
    const verify = await verifyWithCli(options.workspace);
    expect(verify.code).toBe(0);
    expect(verify.text).toContain('2 line(s)');
  });

  it('reports the first line whose content was edited', async () => {
    const kernel = await kernelWithWrites(5);
    await kernel.close();
    const lines = (await readFile(kernel.audit.logFile, 'utf8')).split('\n');
    lines[2] = (lines[2] ?? '').replace('"outcome":"ok"', '"outcome":"error"');
    await writeFile(kernel.audit.logFile, lines.join('\n'));
    const verify = await verifyWithCli(kernel.workspace.root);
    expect(verify.code).toBe(1);
    expect(verify.text).toContain('line 3 of 5');
    expect(verify.text).toContain('altered');
  });

  it('reports a line removed from the middle', async () => {
    const kernel = await kernelWithWrites(5);
    await kernel.close();
    const lines = (await readFile(kernel.audit.logFile, 'utf8')).split('\n');
    lines.splice(1, 1);
    await writeFile(kernel.audit.logFile, lines.join('\n'));
    const verify = await verifyWithCli(kernel.workspace.root);
    expect(verify.code).toBe(1);
    expect(verify.text).toContain('line 2 of 4');
  });

  it('reports lines cut from the end, which no chain alone could show', async () => {
    const kernel = await kernelWithWrites(3);
    await kernel.close();
    const lines = (await readFile(kernel.audit.logFile, 'utf8')).trim().split('\n');
    await writeFile(kernel.audit.logFile, `${lines.slice(0, 2).join('\n')}\n`);
    const verify = await verifyWithCli(kernel.workspace.root);
    expect(verify.code).toBe(1);
    expect(verify.text).toContain('removed from the end');
  });

  it('reports a rewritten line even when its hash was recomputed, through the next line\'s link', async () => {
    const kernel = await kernelWithWrites(3);
    await kernel.close();
    const { hashRecord } = await import('../../../core/audit/audit-record.js');
    const lines = (await readFile(kernel.audit.logFile, 'utf8')).trim().split('\n');
    const record = JSON.parse(lines[0] ?? '') as Record<string, unknown> & { hash: string };
    const { hash: _old, ...rest } = { ...record, outcome: 'error' };
    lines[0] = JSON.stringify({ ...rest, hash: hashRecord(rest as never) });
    await writeFile(kernel.audit.logFile, `${lines.join('\n')}\n`);
    const verify = await verifyWithCli(kernel.workspace.root);
    expect(verify.code).toBe(1);
    expect(verify.text).toContain('line 2 of 3');
  });

  it('continues the chain after a crash between appending a line and writing the head', async () => {
    const options = await harness.kernelOptions({ plugins: ['notes'] });
    const kernel = await Kernel.boot(options);
    await kernel.pipeline.call({ target: 'note_put', input: { name: 'a', text: 'a' }, principal: admin });
    const headAfterOne = await readFile(kernel.audit.headFile, 'utf8');
    await kernel.pipeline.call({ target: 'note_put', input: { name: 'b', text: 'b' }, principal: admin });
    await kernel.close();
    await writeFile(kernel.audit.headFile, headAfterOne);
    const again = await Kernel.boot(options);
    await again.pipeline.call({ target: 'note_put', input: { name: 'c', text: 'c' }, principal: admin });
    await again.close();
    expect(await verifyWithCli(options.workspace)).toMatchObject({ code: 0 });
    const seqs = (await readFile(again.audit.logFile, 'utf8')).trim().split('\n').map((line) => (JSON.parse(line) as { seq: number }).seq);
    expect(seqs).toEqual([1, 2, 3]);
  });

  it('sets a torn final line aside, says so once in the log, and verify reports it as recovered, not as tampering', async () => {
    const options = await harness.kernelOptions({ plugins: ['notes'] });
    const kernel = await Kernel.boot(options);
    await kernel.pipeline.call({ target: 'note_put', input: { name: 'a', text: 'a' }, principal: admin });
    await kernel.close();
    const torn = '{"seq":2,"ti';
    await writeFile(kernel.audit.logFile, `${await readFile(kernel.audit.logFile, 'utf8')}${torn}`);
    const before = await verifyWithCli(options.workspace);
    expect(before.code, before.text).toBe(0);
    expect(before.text).toContain('torn');

    const again = await Kernel.boot(options);
    await again.pipeline.call({ target: 'note_put', input: { name: 'b', text: 'b' }, principal: admin });
    await again.close();
    const kept = (await readdir(join(options.workspace, 'audit'))).filter((name) => name.startsWith('audit.jsonl.torn-'));
    expect(kept).toHaveLength(1);
    expect(await readFile(join(options.workspace, 'audit', kept[0]!), 'utf8')).toBe(torn);
    const records = (await readFile(again.audit.logFile, 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as { seq: number; action: string; details?: Record<string, unknown> });
    expect(records.map((record) => record.action)).toEqual(['put', 'recover_tail', 'put']);
    expect(records[1]?.details).toMatchObject({ bytes: torn.length, keptIn: kept[0] });
    const verify = await verifyWithCli(options.workspace);
    expect(verify.code, verify.text).toBe(0);
    expect(verify.text).toContain(kept[0]);
  });

  it('sets aside a last line that ends with a newline but does not parse (a crash that left zeros)', async () => {
    const options = await harness.kernelOptions({ plugins: ['notes'] });
    const kernel = await Kernel.boot(options);
    await kernel.pipeline.call({ target: 'note_put', input: { name: 'a', text: 'a' }, principal: admin });
    await kernel.close();
    await writeFile(kernel.audit.logFile, Buffer.concat([await readFile(kernel.audit.logFile), Buffer.alloc(300), Buffer.from('\n')]));
    const again = await Kernel.boot(options);
    await again.pipeline.call({ target: 'note_put', input: { name: 'b', text: 'b' }, principal: admin });
    await again.close();
    expect(await verifyWithCli(options.workspace)).toMatchObject({ code: 0 });
    expect((await readdir(join(options.workspace, 'audit'))).filter((name) => name.startsWith('audit.jsonl.torn-'))).toHaveLength(1);
  });

  it('opens a log an older kernel left with torn bytes glued to the next line, and verify names the stray bytes', async () => {
    const options = await harness.kernelOptions({ plugins: ['notes'] });
    const kernel = await Kernel.boot(options);
    await kernel.pipeline.call({ target: 'note_put', input: { name: 'a', text: 'a' }, principal: admin });
    await kernel.pipeline.call({ target: 'note_put', input: { name: 'b', text: 'b' }, principal: admin });
    await kernel.close();
    // What a failed append used to leave: half a line, then the next line written right after it.
    const lines = (await readFile(kernel.audit.logFile, 'utf8')).trim().split('\n');
    await writeFile(kernel.audit.logFile, `${lines[0]}\n{"principal":{"ki${lines[1]}\n`);
    const again = await Kernel.boot(options);
    await again.pipeline.call({ target: 'note_put', input: { name: 'c', text: 'c' }, principal: admin });
    await again.close();
    const verify = await verifyWithCli(options.workspace);
    expect(verify.code, verify.text).toBe(0);
    expect(verify.text).toContain('stray');
  });

  it('reports torn bytes kept beside the log that no line records, without failing', async () => {
    const kernel = await kernelWithWrites(1);
    await kernel.close();
    await writeFile(join(kernel.workspace.auditDir, 'audit.jsonl.torn-2026-01-01T00-00-00-000Z'), '{"seq":2');
    const verify = await verifyWithCli(kernel.workspace.root);
    expect(verify.code, verify.text).toBe(0);
    expect(verify.text).toContain('audit.jsonl.torn-2026-01-01T00-00-00-000Z');
  });

  it('still refuses a last line that does not parse when the head shows it was written whole', async () => {
    const kernel = await kernelWithWrites(2);
    await kernel.close();
    const lines = (await readFile(kernel.audit.logFile, 'utf8')).trim().split('\n');
    await writeFile(kernel.audit.logFile, `${lines[0]}\n${(lines[1] ?? '').slice(0, 40)}\n`);
    const error = await caught(Kernel.boot(await harness.kernelOptions({ plugins: ['notes'], workspace: kernel.workspace.root })));
    expect(error.code).toBe('AUDIT_CHAIN_BROKEN');
    expect((await verifyWithCli(kernel.workspace.root)).code).toBe(1);
  });

  it('refuses to start on a log that lost lines at its end, so new lines cannot hide it', async () => {
    const kernel = await kernelWithWrites(3);
    await kernel.close();
    const lines = (await readFile(kernel.audit.logFile, 'utf8')).trim().split('\n');
    await writeFile(kernel.audit.logFile, `${lines.slice(0, 2).join('\n')}\n`);
    const error = await caught(Kernel.boot(await harness.kernelOptions({ plugins: ['notes'], workspace: kernel.workspace.root })));
    expect(error.code).toBe('AUDIT_CHAIN_BROKEN');
    expect(error.message).toContain('quire audit verify');
  });

  it('reports a missing head file, which would hide lines cut from the end', async () => {
    const kernel = await kernelWithWrites(2);
    await kernel.close();
    await rm(kernel.audit.headFile);
    const verify = await verifyWithCli(kernel.workspace.root);
    expect(verify.code).toBe(1);
    expect(verify.text).toContain('head.json is missing');
  });
});
