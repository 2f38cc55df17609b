import { createHash } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GENESIS_HASH, hashRecord, type AuditRecord } from '../../../core/audit/audit-record.js';
import { runCli } from '../../../core/cli/run-cli.js';
import { createHttpApp } from '../../../core/http/app.js';
import type { Kernel } from '../../../core/kernel.js';
import type { Principal } from '../../../core/plugin-api.js';
import { useBlocks } from '../../plugins/blocks/blocks-harness.js';
import { bufferIO } from '../../helpers/buffer-io.js';

const admin: Principal = { kind: 'person', name: 'admin', role: 'admin' };
const ADMIN = 'qk_anchors-admin';

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
  const blocks = useBlocks();
  const boot = (options: { workspace?: string } = {}) => blocks.boot({ ...options, config: { auth: { tokens: [{ name: 'admin', role: 'admin', sha256: createHash('sha256').update(ADMIN).digest('hex') }] } } });

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

  it('fails POST /api/audit/verify too for a rewritten log, naming the snapshot whose head it no longer has', async () => {
    const first = await boot();
    await writes(first.kernel, ['a', 'b']);
    const snapshot = await first.act<{ id: string }>('snapshot_create', { memo: 'anchor' });
    await writes(first.kernel, ['c']);
    const root = first.kernel.workspace.root;
    await first.kernel.close();
    await rewriteWholeChain(root);
    const { kernel } = await boot({ workspace: root });
    const app = createHttpApp(kernel);
    const answer = await app.request('/api/audit/verify', { method: 'POST', headers: { authorization: `Bearer ${ADMIN}` } });
    const { verification } = await answer.json() as { verification: { ok: boolean; reason?: string } };
    expect([answer.status, verification.ok, verification.reason]).toEqual([200, false, expect.stringContaining(`snapshot ${snapshot.id}`)]);
  });

  it('takes a head file behind the log, at a line the log has as it says, for a running kernel\'s (said), not for tampering', async () => {
    const { kernel } = await boot();
    await writes(kernel, ['a', 'b', 'c']);
    const head = kernel.audit.currentHead();
    await kernel.close();
    const headFile = join(kernel.workspace.root, 'audit', 'audit.head.json');
    const records = (await readFile(join(kernel.workspace.root, 'audit', 'audit.jsonl'), 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as AuditRecord);
    const earlier = records.at(-3)!;
    // As a running kernel leaves it: the head a few lines back, at a line of the log.
    await writeFile(headFile, JSON.stringify({ seq: earlier.seq, hash: earlier.hash }));
    const lagging = await cli('audit', 'verify', '--workspace', kernel.workspace.root);
    expect(lagging.code, lagging.text).toBe(0);
    expect(lagging.text).toContain(`the head file is ${head.seq - earlier.seq} line(s) behind the log`);
    // A head behind the log that names a hash the log does not have there: the log was changed.
    await writeFile(headFile, JSON.stringify({ seq: earlier.seq, hash: 'f'.repeat(64) }));
    expect((await cli('audit', 'verify', '--workspace', kernel.workspace.root)).code).toBe(1);
  });

  it('refuses an --anchor that is not seq:hash', async () => {
    const { kernel } = await boot();
    await kernel.close();
    expect((await cli('audit', 'verify', '--workspace', kernel.workspace.root, '--anchor', 'nonsense')).code).toBe(2);
  });
});
