import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageLedger, type UsageRecord } from '../../../core/usage/usage-ledger.js';
import { useHarness } from '../../helpers/harness.js';

const RECORD: UsageRecord = { kind: 'embedding', provider: 'providers/openai', model: 'm', input: 12, cachedInput: 0, output: 0, reasoning: 0, estimated: true };

describe('the usage ledger on disk', () => {
  const harness = useHarness();

  it('syncs a burst of records once, off the event loop, and by itself', async () => {
    const file = join(await harness.tempDir(), 'usage.db');
    const ledger = new UsageLedger(file, () => ({}));
    try {
      for (let i = 0; i < 50; i++) ledger.record(RECORD);
      expect(ledger.walSync.syncs).toBe(0);
      await ledger.walSync.durable();
      expect(ledger.walSync.syncs).toBe(1);
      expect(ledger.total({}).requests).toBe(50);
      // Nobody asks: the sync still comes, a little after the record.
      ledger.record(RECORD);
      await expect.poll(() => ledger.walSync.syncs, { timeout: 10_000 }).toBe(2);
    } finally {
      ledger.close();
    }
  });

  it('keeps every returned record across a crash of the kernel (the files as a killed process leaves them)', async () => {
    const folder = await harness.tempDir();
    const file = join(folder, 'usage.db');
    const ledger = new UsageLedger(file, () => ({}));
    const crashed = join(folder, 'crashed.db');
    try {
      for (let i = 0; i < 7; i++) ledger.record(RECORD);
      // Copied while open, before any sync: what the OS holds of the files is what a restart finds.
      await copyFile(file, crashed);
      await copyFile(`${file}-wal`, `${crashed}-wal`);
    } finally {
      ledger.close();
    }
    const reopened = new UsageLedger(crashed, () => ({}));
    try {
      expect(reopened.total({}).requests).toBe(7);
    } finally {
      reopened.close();
    }
  });

  it('syncs what is due when closed (another connection may keep SQLite from checkpointing), then stops', async () => {
    const file = join(await harness.tempDir(), 'usage.db');
    const ledger = new UsageLedger(file, () => ({}));
    ledger.record(RECORD);
    ledger.close();
    expect(ledger.walSync.syncs).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(ledger.walSync.syncs).toBe(1);
    const idle = new UsageLedger(join(await harness.tempDir(), 'usage.db'), () => ({}));
    idle.close();
    expect(idle.walSync.syncs).toBe(0);
    const reopened = new UsageLedger(file, () => ({}));
    try {
      expect(reopened.total({}).requests).toBe(1);
    } finally {
      reopened.close();
    }
  });
});
