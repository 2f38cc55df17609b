import { mkdir, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';
import { copyUnlessSame } from './file-digest.js';
import { mapOutsideCode } from './obsidian/outside-code.js';
import { ASSET_LINK, destinationName } from './link-syntax.js';
import { outsideWorkspace } from './outside-workspace.js';

/**
 * The attachments of a plain Markdown export: each file's links to `assets/…` made relative to where
 * the file is written (`../assets/…` one folder down), and the files they link copied into
 * `<folder>/assets/` at the end. An export wrote the notes alone, every image left pointing at nothing.
 */
export class MarkdownAssets {
  private readonly linked = new Set<string>();

  constructor(private readonly folder: string) {}

  /** The Markdown of the file written at `file`, its asset links relative to it. Code is left alone. */
  rewrite(markdown: string, file: string): string {
    const down = relative(this.folder, dirname(file));
    const prefix = down === '' ? '' : '../'.repeat(down.split(sep).length);
    return mapOutsideCode(markdown, (prose) => prose.replace(ASSET_LINK, (_whole, bang: string, label: string, name: string, title: string) => {
      this.linked.add(destinationName(name));
      return `${bang}[${label}](${prefix}assets/${name}${title})`;
    }), { comments: false });
  }

  /** Copies the linked files into `<folder>/assets/` (copyAssets). */
  async finish(workspaceRoot: string, overwrite: boolean): Promise<{ linked: number; copied: number; missing?: string[]; notReplaced?: string[] }> {
    if (this.linked.size === 0) return { linked: 0, copied: 0 };
    const { copied, missing, kept } = await copyAssets(this.folder, workspaceRoot, this.linked, overwrite);
    return {
      linked: this.linked.size, copied,
      ...(missing.length > 0 ? { missing: missing.slice(0, 500) } : {}),
      ...(kept.length > 0 ? { notReplaced: kept.slice(0, 500) } : {}),
    };
  }
}

/**
 * Copies files of the workspace's `assets/` into `<folder>/assets/`. A file there already with other
 * bytes is replaced only with `overwrite`, else listed as kept; a name that is not a plain file name of
 * `assets/`, or not there, is listed missing.
 */
export async function copyAssets(folder: string, workspaceRoot: string, names: Iterable<string>, overwrite: boolean): Promise<{ copied: number; missing: string[]; kept: string[] }> {
  const assets = join(folder, 'assets');
  await mkdir(assets, { recursive: true });
  // `assets` may be a link already there: checked where it really leads, as each file's folder is.
  await outsideWorkspace(await realpath(assets), workspaceRoot, 'folder', { writes: true });
  const missing: string[] = [];
  const kept: string[] = [];
  let copied = 0;
  for (const name of names) {
    // A path inside `assets/` (a SiYuan import keeps its sub-folders): no segment empty, hidden, `..` or with a backslash.
    const segments = name.split('/');
    if (name.includes('\\') || segments.some((segment) => segment === '' || segment.startsWith('.'))) { missing.push(name); continue; }
    if (segments.length > 1) {
      await mkdir(dirname(join(assets, name)), { recursive: true });
      // A sub-folder already there may be a link out of assets/ (into the workspace): checked where it leads.
      const real = await realpath(dirname(join(assets, name)));
      const within = relative(await realpath(assets), real);
      if (within.startsWith('..') || isAbsolute(within)) { missing.push(name); continue; }
      await outsideWorkspace(real, workspaceRoot, 'folder', { writes: true });
    }
    const outcome = await copyUnlessSame(join(workspaceRoot, 'assets', name), join(assets, name), overwrite);
    if (outcome === 'missing') missing.push(name);
    else if (outcome === 'different') kept.push(name);
    else if (outcome === 'copied') copied++;
  }
  return { copied, missing, kept };
}
