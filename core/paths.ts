import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where the kernel's code lives. This module sits in `<code root>/core/`, both in the sources (run by
 * vitest) and in `dist/` (run by node), so native plugin entries resolve against the same layout.
 */
export const CODE_ROOT = dirname(dirname(fileURLToPath(import.meta.url)));

/** The folder holding package.json and manifests/ (the code root itself, or its parent for dist/). */
export const PACKAGE_ROOT = findPackageRoot(CODE_ROOT);

export const NATIVE_MANIFESTS_DIR = join(PACKAGE_ROOT, 'manifests');

export const KERNEL_VERSION: string = readPackageVersion(PACKAGE_ROOT);

function findPackageRoot(start: string): string {
  let folder = start;
  for (let depth = 0; depth < 4; depth++) {
    if (existsSync(join(folder, 'package.json')) && existsSync(join(folder, 'manifests'))) return folder;
    folder = dirname(folder);
  }
  throw new Error(`cannot find the Quire package root above ${start}`);
}

function readPackageVersion(root: string): string {
  const parsed: unknown = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const version = (parsed as { version?: unknown }).version;
  if (typeof version !== 'string') throw new Error(`package.json in ${root} has no version`);
  return version;
}
