import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Kernel } from '../../../core/kernel.js';
import { useHarness } from '../../helpers/harness.js';

describe('the admin token written into quire.json at the first start', () => {
  const harness = useHarness();

  it('keeps a private quire.json private, and makes a new one private (it may hold secrets: MCP headers, env)', async () => {
    const kept = join(await harness.tempDir(), 'ws');
    await mkdir(kept);
    await writeFile(join(kept, 'quire.json'), JSON.stringify({ mcp: { servers: {} } }), { mode: 0o600 });
    const made = join(await harness.tempDir(), 'ws');
    for (const workspace of [kept, made]) {
      // As `quire serve` boots: quire.json read from the workspace, an admin token made when it has none.
      const { config: _inMemory, ...options } = await harness.kernelOptions({ workspace });
      const kernel = await Kernel.boot({ ...options, generateAdminToken: true });
      try {
        expect(kernel.generatedAdminToken).toBeDefined();
        const file = join(workspace, 'quire.json');
        expect([workspace, (await stat(file)).mode & 0o777]).toEqual([workspace, 0o600]);
        expect(JSON.parse(await readFile(file, 'utf8')).auth.tokens).toHaveLength(1);
      } finally {
        await kernel.close();
      }
    }
  });
});
