import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, type Command } from '../cli-io.js';
import { describeError } from '../one-shot-kernel.js';
import { parseOptions } from '../parse-options.js';
import { isPluginId } from '../../manifest/wire-name.js';
import { KERNEL_VERSION, PACKAGE_ROOT } from '../../paths.js';


/** The files of a new plugin: a manifest, a TypeScript entry typed by `quire/plugin`, its build and a README. */
export function pluginScaffold(id: string): Record<string, string> {
  // A tool name holds at most 48 characters, an id 64: a long id's tool is cut (it failed validation).
  const tool = id.replace(/-/g, '_').slice(0, 48).replace(/_+$/, '');
  const manifest = {
    id, version: '0.1.0', kernel: `^${KERNEL_VERSION}`, description: `What ${id} does, in one sentence.`, entry: 'dist/index.js',
    tools: [{
      name: tool, description: `The ${id} tool.`,
      actions: {
        hello: {
          description: 'Greets someone. Reads nothing, writes nothing: no effects.',
          input: { type: 'object', properties: { name: { type: 'string', minLength: 1, maxLength: 100 } }, required: ['name'], additionalProperties: false },
          effects: [],
        },
      },
    }],
  };
  return {
    'manifest.json': `${JSON.stringify(manifest, null, 2)}\n`,
    'src/index.ts': `import type { ActionHandler, PluginDefinition } from 'quire/plugin';

interface HelloInput { name: string }

// Every action the manifest declares has a handler here; the kernel refuses a plugin whose handlers differ.
// The input arrives validated against the action's input schema in manifest.json.
const hello: ActionHandler = (input, call) => {
  const { name } = input as unknown as HelloInput;
  call.log.info('greeting', { name });
  return { greeting: \`Hello, \${name}!\` };
};

const plugin: PluginDefinition = {
  activate(ctx) {
    ctx.log.info('${id} activated');
    return { ${tool}: { hello } };
  },
};

export default plugin;
`,
    'tsconfig.json': `${JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, outDir: 'dist', rootDir: 'src', skipLibCheck: true },
      include: ['src/**/*.ts'],
    }, null, 2)}\n`,
    // The kernel that made the scaffold, by its folder: Quire is not on npm, and `quire` there is another
    // package (^0.1.0 would install a stranger's code the day someone publishes that version).
    'package.json': `${JSON.stringify({ name: id, version: '0.1.0', private: true, type: 'module', scripts: { build: 'tsc -p tsconfig.json', test: 'npm run build && node --test test/' }, devDependencies: { quire: `file:${PACKAGE_ROOT}`, typescript: '7.0.2' } }, null, 2)}\n`,
    'test/plugin.test.mjs': `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { startTestKernel } from 'quire/testing';

// A real kernel over a fresh workspace, this plugin installed in it as a person would install it.
test('${tool}_hello greets, through a real kernel', async () => {
  const quire = await startTestKernel({ plugin: fileURLToPath(new URL('..', import.meta.url)) });
  try {
    assert.deepEqual(await quire.call('${tool}_hello', { name: 'Ada' }), { greeting: 'Hello, Ada!' });
  } finally {
    await quire.close();
  }
});
`,
    'README.md': `# ${id}\n\nA Quire plugin. \`npm test\` builds it and runs it in a real kernel (\`quire/testing\`); then \`quire plugin validate .\` and \`quire plugin install . --workspace <dir>\`.\n\nEach action declares its effects in manifest.json (localWrite, dataEgress, externalCost); the kernel holds the code to them.\n`,
  };
}

export const pluginNewCommand: Command = {
  name: 'plugin new',
  summary: 'scaffold a plugin folder: manifest, TypeScript entry typed by quire/plugin, build',
  help: 'Usage: quire plugin new <id> [--dir <folder>]\n\nWrites <folder>/<id>/ (default folder: the current one) with manifest.json, src/index.ts, tsconfig.json,\npackage.json, test/plugin.test.mjs (a real kernel through quire/testing) and README.md.\n<id>: lowercase letters, digits and hyphens.',
  async run(args, io) {
    const parsed = parseOptions(args, { dir: { type: 'string' } }, io, 'plugin new', { max: 1 });
    if (!parsed) return EXIT_USAGE;
    if (parsed.values.help) return io.out(this.help), EXIT_OK;
    const id = parsed.positionals[0];
    if (!id || !isPluginId(id)) {
      io.err(`quire plugin new: give an id of lowercase letters, digits and hyphens${id ? `, not '${id.slice(0, 64)}'` : ''}`);
      return EXIT_USAGE;
    }
    const folder = join(resolve(String(parsed.values.dir ?? '.')), id);
    if (existsSync(folder)) return io.err(`quire plugin new: ${folder} already exists`), EXIT_PROBLEMS;
    try {
      for (const [path, text] of Object.entries(pluginScaffold(id))) {
        await mkdir(join(folder, path, '..'), { recursive: true });
        await writeFile(join(folder, path), text, { flag: 'wx' });
      }
      io.out(`wrote ${folder}: npm install && npm run build, then quire plugin install ${folder}`);
      return EXIT_OK;
    } catch (error) {
      io.err(`quire plugin new: ${describeError(error)}`);
      return EXIT_PROBLEMS;
    }
  },
};
