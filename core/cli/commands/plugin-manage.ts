import { randomBytes } from 'node:crypto';
import { cp, lstat, mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
// The skills plugin's tar reader: it checks every path, link and size before anything is written.
import { readTarGz } from '../../../plugins/skills/archive-tar.js';
import { isPluginEnabled, readKernelConfigFile, withDefaults, type KernelConfigFile } from '../../config/kernel-config.js';
import { loadUserManifests, readManifestFile } from '../../manifest/load-manifests.js';
import { crossCheck } from './plugin-validate.js';
import { pluginsListing } from '../../http/routes/plugins.js';
import { findServingKernel } from '../../http/serve-address.js';
import { Workspace } from '../../workspace.js';
import { KernelClient } from '../chat/kernel-client.js';
import { EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, type CliIO, type Command } from '../cli-io.js';
import { assertWorkspaceExists, describeError, withKernel } from '../one-shot-kernel.js';
import { parseOptions } from '../parse-options.js';

/** What an installed plugin folder may hold: bounded, and nothing that points outside it. */
const MAX_FILES = 2_000;
const MAX_BYTES = 50 * 1024 * 1024;

interface ListedAction { wireName: string; effects: string[] }
interface ListedPlugin { id: string; source: string; state: string; enabled: boolean; trusted: boolean; problems?: { code?: string; message: string }[]; tools?: { actions: ListedAction[] }[] }

export const pluginListCommand: Command = {
  name: 'plugin list',
  summary: 'the plugins found, which are active, and why any is refused',
  help: 'Usage: quire plugin list [--json] [--workspace <dir>]\n\nAsks the kernel serving the workspace when there is one (GET /api/plugins); otherwise opens it.',
  async run(args, io) {
    const parsed = parseOptions(args, { workspace: { type: 'string', short: 'w' }, json: { type: 'boolean' } }, io, 'plugin list', { max: 0 });
    if (!parsed) return EXIT_USAGE;
    if (parsed.values.help) return io.out(this.help), EXIT_OK;
    const root = resolve(String(parsed.values.workspace ?? './workspace'));
    try {
      const serving = await findServingKernel(root);
      const token = process.env.QUIRE_TOKEN?.trim() || (await readFile(join(root, '.quire', 'admin.token'), 'utf8').catch(() => '')).trim();
      const listing = serving && token !== ''
        ? await new KernelClient(serving.url, token).json<{ plugins: ListedPlugin[] }>('GET', '/api/plugins')
        : await withKernel(root, io, async (kernel) => pluginsListing(kernel, true) as unknown as { plugins: ListedPlugin[] });
      if (parsed.values.json) return io.out(JSON.stringify(listing, null, 2)), EXIT_OK;
      for (const plugin of listing.plugins) {
        const actions = (plugin.tools ?? []).flatMap((tool) => tool.actions);
        const effects = [...new Set(actions.flatMap((action) => action.effects))];
        io.out(`${plugin.id}  ${plugin.state}  ${plugin.source}${plugin.trusted ? ', trusted' : ''}  ${actions.length} actions${effects.length > 0 ? ` (${effects.join(', ')})` : ''}`);
        for (const problem of plugin.problems ?? []) io.out(`    refused: ${problem.code ? `${problem.code}: ` : ''}${problem.message}`);
      }
      return EXIT_OK;
    } catch (error) {
      io.err(`quire plugin list: ${describeError(error)}`);
      return EXIT_PROBLEMS;
    }
  },
};

export const pluginInstallCommand: Command = {
  name: 'plugin install',
  summary: 'check a plugin folder or .tgz, show what it declares, and install it all or nothing',
  help: [
    'Usage: quire plugin install <folder or .tgz> [--replace] [--workspace <dir>]',
    '',
    'Validates the folder\'s manifest.json (as quire plugin validate does), shows the plugin\'s actions',
    'with their declared effects and how it will run, then copies the folder to <workspace>/plugins/<id>/',
    'whole or not at all. A plugin installs untrusted: it runs in a process of its own, without the',
    'network unless an action declares dataEgress; mark it trusted in quire.json only once you have read it.',
    'The kernel picks it up at its next start.',
    '',
    'Options:',
    '      --replace           replace an installed plugin of the same id',
    '  -w, --workspace <dir>   workspace folder (default: ./workspace)',
  ].join('\n'),
  async run(args, io) {
    const parsed = parseOptions(args, { workspace: { type: 'string', short: 'w' }, replace: { type: 'boolean' } }, io, 'plugin install', { max: 1 });
    if (!parsed) return EXIT_USAGE;
    if (parsed.values.help) return io.out(this.help), EXIT_OK;
    const source = parsed.positionals[0];
    if (!source) return io.err('quire plugin install: give a plugin folder'), EXIT_USAGE;
    try {
      const root = resolve(String(parsed.values.workspace ?? './workspace'));
      // A mistyped path got a plugins folder made, and "installed" (exit 0).
      assertWorkspaceExists(root);
      return await install(resolve(source), new Workspace(root), parsed.values.replace === true, io);
    } catch (error) {
      io.err(`quire plugin install: ${describeError(error)}`);
      return EXIT_PROBLEMS;
    }
  },
};

async function install(source: string, workspace: Workspace, replace: boolean, io: CliIO): Promise<number> {
  if (!source.endsWith('.tgz') && !source.endsWith('.tar.gz')) return installFolder(source, workspace, replace, io);
  // An archive (as `npm pack` makes it) is checked whole, unpacked aside, then installed as a folder.
  const files = readTarGz(await readFile(source), { maxFiles: MAX_FILES, maxBytes: MAX_BYTES, maxRatio: 100 });
  const tops = new Set(files.map((file) => file.path.split('/')[0]));
  const strip = tops.size === 1 && files.every((file) => file.path.includes('/')) ? `${[...tops][0]}/` : '';
  const unpacked = await mkdtemp(join(tmpdir(), 'quire-plugin-archive-'));
  try {
    for (const file of files) {
      const target = join(unpacked, file.path.slice(strip.length));
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, file.data, { flag: 'wx' });
    }
    return await installFolder(unpacked, workspace, replace, io);
  } finally {
    await rm(unpacked, { recursive: true, force: true });
  }
}

async function installFolder(folder: string, workspace: Workspace, replace: boolean, io: CliIO): Promise<number> {
  const manifestFile = join(folder, 'manifest.json');
  if (!existsSync(manifestFile)) return io.err(`quire plugin install: ${manifestFile} is missing`), EXIT_PROBLEMS;
  // The id the manifest declares is what the folder is installed as; a manifest that does not parse is the checked reader's to say.
  let declaredId = '';
  try {
    declaredId = String((JSON.parse(await readFile(manifestFile, 'utf8')) as { id?: unknown }).id ?? '');
  } catch {
    // read again below, which names the file and the problem
  }
  const record = await readManifestFile(manifestFile, { source: 'user', expectedId: declaredId, entryBase: folder });
  if (!record.ok) {
    for (const issue of record.issues) io.err(`${issue.file}#${issue.pointer}: ${issue.code} ${issue.message}`);
    io.err('quire plugin install: nothing was installed');
    return EXIT_PROBLEMS;
  }
  // As `plugin validate` does, and a start would: an id or action name a native or another installed
  // plugin has, or a requirement nothing provides (it was installed, then refused at the next start).
  const installed = (await loadUserManifests(workspace.pluginsDir)).filter((other) => !other.ok || other.compiled.manifest.id !== record.compiled.manifest.id);
  // A plugin quire.json disables is not started, so nothing of it can clash (the one installed is checked whatever quire.json says).
  const config = withDefaults(await readKernelConfigFile(workspace.configFile).catch(() => ({}) as KernelConfigFile));
  if (await crossCheck([record], io, installed, (id) => id === record.compiled.manifest.id || isPluginEnabled(config, id)) > 0) {
    io.err('quire plugin install: nothing was installed');
    return EXIT_PROBLEMS;
  }
  const { manifest } = record.compiled;
  const keep = await keptPaths(folder);
  await checkFolder(folder, keep);
  // Trust is quire.json's, by id: a plugin installed under an id marked trusted gets that trust, new code or not.
  const trusted = (await readKernelConfigFile(workspace.configFile).catch(() => ({ plugins: {} }) as KernelConfigFile)).plugins?.[manifest.id]?.trusted === true;
  io.out(`${manifest.id} ${manifest.version}: ${manifest.description}`);
  for (const action of record.compiled.actions) io.out(`  ${action.wireName}: ${action.spec.effects.length > 0 ? action.spec.effects.join(', ') : trusted ? 'no effects declared (trusted: taken at its word)' : 'no effects declared (counted as every effect while the plugin is untrusted)'}${action.spec.destructive ? ', destructive' : ''}`);
  for (const kind of ['embedders', 'rerankers', 'providers'] as const) for (const backend of manifest[kind] ?? []) io.out(`  ${kind.slice(0, -1)} ${backend.name}: ${backend.effects.join(', ') || 'no effects'}`);
  if (trusted) {
    io.out(`quire.json marks '${manifest.id}' trusted: this code will run in the kernel's own process, with all it can reach, and its declared effects are taken at their word. If you have not read it, remove "trusted" from plugins.${manifest.id} in quire.json before the kernel starts again.`);
  } else {
    io.out('It will run untrusted: in a process of its own, refused the network unless an action declares dataEgress; the agent asks you before any action with an effect.');
  }
  const target = join(workspace.pluginsDir, manifest.id);
  if (existsSync(target) && !replace) return io.err(`quire plugin install: ${target} exists; give --replace to replace it`), EXIT_PROBLEMS;
  // Copied beside its place, then moved in with one rename: a plugin is installed whole or not at all.
  const staging = join(workspace.pluginsDir, `.install-${manifest.id}-${randomBytes(4).toString('hex')}`);
  try {
    await cp(folder, staging, { recursive: true, errorOnExist: true, verbatimSymlinks: true, filter: keep });
    if (existsSync(target)) {
      const old = `${staging}-old`;
      await rename(target, old);
      await rename(staging, target);
      await rm(old, { recursive: true, force: true });
    } else {
      await rename(staging, target);
    }
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  io.out(`installed ${manifest.id} in ${target}; the kernel loads it at its next start (quire plugin list shows it)`);
  return EXIT_OK;
}

/**
 * What is copied: everything but `node_modules/.bin` (links to tools), and `node_modules` altogether
 * when package.json declares no runtime `dependencies` (a build's devDependencies, such as quire
 * itself and typescript, are not the plugin's).
 */
async function keptPaths(folder: string): Promise<(path: string) => boolean> {
  const pkg = await readFile(join(folder, 'package.json'), 'utf8').then((text) => JSON.parse(text) as { dependencies?: Record<string, string> }, () => undefined);
  const runtimeDeps = Object.keys(pkg?.dependencies ?? {}).length > 0;
  const modules = join(folder, 'node_modules');
  return (path) => {
    if (path === modules || path.startsWith(`${modules}/`)) return runtimeDeps && !path.startsWith(join(modules, '.bin'));
    return true;
  };
}

/** No links (they could point anywhere), at most MAX_FILES files and MAX_BYTES in all, of what is copied. */
async function checkFolder(folder: string, keep: (path: string) => boolean): Promise<void> {
  let files = 0;
  let bytes = 0;
  for (const entry of await readdir(folder, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    if (!keep(path)) continue;
    const info = await lstat(path);
    if (info.isSymbolicLink()) throw new Error(`${path} is a link; a plugin folder holds files only`);
    if (!info.isFile()) continue;
    files += 1;
    bytes += info.size;
    if (files > MAX_FILES) throw new Error(`the folder holds more than ${MAX_FILES} files`);
    if (bytes > MAX_BYTES) throw new Error(`the folder holds more than ${MAX_BYTES / 1024 / 1024} MB`);
  }
}
