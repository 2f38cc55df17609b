import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GENESIS_HASH, hashRecord, type AuditRecord } from '../../../core/audit/audit-record.js';
import { runCli } from '../../../core/cli/run-cli.js';
import type { Kernel } from '../../../core/kernel.js';
import type { Principal } from '../../../core/plugin-api.js';
import { useBlocks } from '../../plugins/blocks/blocks-harness.js';
import { bufferIO } from '../../helpers/buffer-io.js';

const admin: Principal = { kind: 'person', name: 'admin', role: 'admin' };

async function cli(...args: string[]): Promise<{ code: number; out: string; text: string }> {
  const io = bufferIO();
  const code = await runCli(args, io);
  return { code, out: io.outText(), text: `${io.outText()}\n${io.errText()}` };
}

/**
 * What an attacker with write access to the workspace does: change a line, then recompute every hash
 * after it and the head file, so that the chain alone verifies again.
 */
async function rewriteWholeChain(workspace: string): Promise<void> {
  const logFile = join(workspace, 'audit', 'audit.jsonl');
  const records = (await readFile(logFile, 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as AuditRecord);
  records[0] = { ...records[0]!, outcome: 'refused' };
  let prev = GENESIS_HASH;
  const rewritten = records.map((record) => {
    const { hash: _old, ...unsealed } = { ...record, prev };
    const sealed = { ...unsealed, hash: hashRecord(unsealed) };
    prev = sealed.hash;
    return sealed;
  });
  await writeFile(logFile, rewritten.map((record) => `${JSON.stringify(record)}\n`).join(''));
  const last = rewritten.at(-1)!;
  await writeFile(join(workspace, 'audit', 'audit.head.json'), JSON.stringify({ seq: last.seq, hash: last.hash }));
}

describe('audit anchors', () => {
  const { boot } = useBlocks();

  async function writes(kernel: Kernel, names: string[]): Promise<void> {
    for (const name of names) await kernel.pipeline.call({ target: 'notebook_create', input: { name }, principal: admin });
  }

  it('quire audit anchor prints the head as seq:hash on one line and records it in audit/anchors.jsonl', async () => {
    const { kernel } = await boot();
    await writes(kernel, ['a', 'b']);
    const head = kernel.audit.currentHead();
    await kernel.close();
    const anchored = await cli('audit', 'anchor', '--workspace', kernel.workspace.root);
    expect(anchored.code, anchored.text).toBe(0);
    expect(anchored.out.trim()).toBe(`${head.seq}:${head.hash}`);
    const recorded = (await readFile(join(kernel.workspace.root, 'audit', 'anchors.jsonl'), 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(recorded).toEqual([expect.objectContaining({ seq: head.seq, hash: head.hash })]);
  });

  it('records the audit head in every snapshot', async () => {
    const { kernel, act } = await boot();
    await writes(kernel, ['a']);
    const head = kernel.audit.currentHead();
    const snapshot = await act<{ id: string }>('snapshot_create', { memo: 'anchored' });
    const record = JSON.parse(await readFile(join(kernel.workspace.root, 'repo', 'snapshots', `${snapshot.id}.json`), 'utf8')) as { auditHead?: unknown };
    expect(record.auditHead).toEqual({ seq: head.seq, hash: head.hash });
  });

  it('says which lines are anchored and which come after the last anchor', async () => {
    const { kernel } = await boot();
    await writes(kernel, ['a', 'b']);
    await kernel.close();
    expect((await cli('audit', 'anchor', '--workspace', kernel.workspace.root)).code).toBe(0);
    const { kernel: again } = await boot({ workspace: kernel.workspace.root });
    await writes(again, ['c']);
    await again.close();
    const verify = await cli('audit', 'verify', '--workspace', kernel.workspace.root);
    expect(verify.code, verify.text).toBe(0);
    expect(verify.text).toContain('anchored: lines 1-2');
    expect(verify.text).toContain('unanchored: line 3');
  });

  it('fails verify, naming the anchor, when the log was rewritten with its whole chain and head recomputed', async () => {
    const { kernel } = await boot();
    await writes(kernel, ['a', 'b', 'c']);
    await kernel.close();
    const root = kernel.workspace.root;
    const printed = (await cli('audit', 'anchor', '--workspace', root)).out.trim();
    await rewriteWholeChain(root);

    const withFile = await cli('audit', 'verify', '--workspace', root);
    expect(withFile.code, withFile.text).toBe(1);
    expect(withFile.text).toContain('anchors.jsonl line 1');
    // The chain alone cannot tell: without the anchor the rewritten log verifies.
    await rm(join(root, 'audit', 'anchors.jsonl'));
    expect((await cli('audit', 'verify', '--workspace', root)).code).toBe(0);
    // An anchor kept outside the workspace, given back on the command line.
    const given = await cli('audit', 'verify', '--workspace', root, '--anchor', printed);
    expect(given.code, given.text).toBe(1);
    expect(given.text).toContain(`--anchor ${printed.split(':')[0]}`);
  });

  it('fails verify naming the snapshot whose recorded head the rewritten log no longer has', async () => {
    const { kernel, act } = await boot();
    await writes(kernel, ['a', 'b']);
    const snapshot = await act<{ id: string }>('snapshot_create', { memo: 'anchor' });
    await writes(kernel, ['c']);
    await kernel.close();
    await rewriteWholeChain(kernel.workspace.root);
    const verify = await cli('audit', 'verify', '--workspace', kernel.workspace.root);
    expect(verify.code, verify.text).toBe(1);
    expect(verify.text).toContain(`snapshot ${snapshot.id}`);
  });

  it('refuses an --anchor that is not seq:hash', async () => {
    const { kernel } = await boot();
    await kernel.close();
    expect((await cli('audit', 'verify', '--workspace', kernel.workspace.root, '--anchor', 'nonsense')).code).toBe(2);
  });
});
