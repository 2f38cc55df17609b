import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readManifestsAt } from '../../../core/manifest/load-manifests.js';
import { runCli } from '../../../core/cli/run-cli.js';
import { REPO_ROOT, useHarness } from '../../helpers/harness.js';
import { bufferIO } from '../../helpers/buffer-io.js';

interface InvalidFixture {
  description: string;
  expect: { code: string; pointer: string };
  folder?: string;
  manifest?: { id?: string };
  raw?: string;
}

const FIXTURES = join(REPO_ROOT, 'test', 'fixtures', 'manifests', 'invalid');
const cases = readdirSync(FIXTURES).filter((name) => name.endsWith('.json')).sort()
  .map((name) => [name, JSON.parse(readFileSync(join(FIXTURES, name), 'utf8')) as InvalidFixture] as const);

describe('invalid manifests', () => {
  const harness = useHarness();

  async function writeFixture(fixture: InvalidFixture): Promise<string> {
    const folder = join(await harness.tempDir(), fixture.folder ?? fixture.manifest?.id ?? 'sample');
    await mkdir(folder, { recursive: true });
    await writeFile(join(folder, 'manifest.json'), fixture.raw ?? JSON.stringify(fixture.manifest, null, 2));
    await writeFile(join(folder, 'index.js'), 'export default { activate() { return {}; } };\n');
    return folder;
  }

  it('has at least 30 cases, one per file', () => {
    expect(cases.length).toBeGreaterThanOrEqual(30);
  });

  it.each(cases)('%s produces its error code at its JSON pointer', async (_name, fixture) => {
    const folder = await writeFixture(fixture);
    const [record] = await readManifestsAt(folder);
    expect(record?.ok).toBe(false);
    if (!record || record.ok) return;
    expect(record.issues).toContainEqual(expect.objectContaining({
      code: fixture.expect.code, pointer: fixture.expect.pointer, file: join(folder, 'manifest.json'),
    }));
    for (const issue of record.issues) expect(issue.message.length).toBeGreaterThan(0);
  });

  it.each(cases)('quire plugin validate reports %s with file, pointer and code, and exits 1', async (_name, fixture) => {
    const folder = await writeFixture(fixture);
    const io = bufferIO();
    expect(await runCli(['plugin', 'validate', folder], io)).toBe(1);
    expect(io.errText()).toContain(`${join(folder, 'manifest.json')}#${fixture.expect.pointer}: ${fixture.expect.code} `);
  });

  it('prints every problem of a manifest, not only the first', async () => {
    const folder = join(await harness.tempDir(), 'many');
    await mkdir(folder);
    await writeFile(join(folder, 'manifest.json'), JSON.stringify({ id: 'many', tools: [{ name: 'X' }], extra: 1 }));
    const io = bufferIO();
    expect(await runCli(['plugin', 'validate', folder], io)).toBe(1);
    for (const pointer of ['#/version:', '#/kernel:', '#/entry:', '#/description:', '#/extra:', '#/tools/0/name:', '#/tools/0/actions:']) {
      expect(io.errText()).toContain(pointer);
    }
  });
});
