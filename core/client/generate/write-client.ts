import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildOpenApiDocument } from '../../http/openapi/build-document.js';
import { Kernel } from '../../kernel.js';
import { silentLogger } from '../../log.js';
import { KERNEL_VERSION, PACKAGE_ROOT } from '../../paths.js';
import { generateClientSource } from './generate-client.js';

/** The kernel configuration the committed client describes: the native plugins, as a new workspace has them. */
export const CLIENT_KERNEL_CONFIG = { plugins: { blocks: { config: { watch: false, welcome: false } } } };

/** The OpenAPI document of a new workspace's kernel (native plugins, their defaults). */
export async function defaultDocument(): Promise<ReturnType<typeof buildOpenApiDocument>> {
  const root = join(await mkdtemp(join(tmpdir(), 'quire-openapi-')), 'workspace');
  const kernel = await Kernel.boot({ workspace: root, logger: silentLogger, config: CLIENT_KERNEL_CONFIG });
  try {
    return buildOpenApiDocument({ version: KERNEL_VERSION, actions: kernel.registry.list() });
  } finally {
    await kernel.close();
    await rm(join(root, '..'), { recursive: true, force: true });
  }
}

/** `npm run generate:client`: writes core/client/api-schema.ts from the document. */
async function main(): Promise<void> {
  const target = join(PACKAGE_ROOT, 'core', 'client', 'api-schema.ts');
  await writeFile(target, generateClientSource(await defaultDocument()));
  process.stdout.write(`wrote ${target}\n`);
}

if (process.argv[1]?.endsWith('write-client.js')) await main();
