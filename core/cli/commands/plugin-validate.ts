import { existsSync } from 'node:fs';
import { readManifestsAt } from '../../manifest/load-manifests.js';
import { EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, type Command } from '../cli-io.js';
import { parseOptions } from '../parse-options.js';

export const pluginValidateCommand: Command = {
  name: 'plugin validate',
  summary: 'check plugin manifests without loading their code',
  help: `Usage: quire plugin validate <path>...

Validates plugin manifests against manifests/plugin-manifest.schema.json and the rules a schema cannot
express (semver, kernel range, input schemas that compile, wire names, the entry module exists).
<path> is a manifest file, a plugin folder holding manifest.json, or a folder of manifests.

Prints every problem as  <file>#<JSON pointer>: <CODE> <reason>  and exits 1 if there is any.`,
  async run(args, io) {
    const parsed = parseOptions(args, {}, io, 'plugin validate');
    if (!parsed) return EXIT_USAGE;
    if (parsed.values.help) return io.out(this.help), EXIT_OK;
    if (parsed.positionals.length === 0) {
      io.err('quire plugin validate: give at least one manifest file or plugin folder');
      return EXIT_USAGE;
    }
    let problems = 0;
    let checked = 0;
    for (const path of parsed.positionals) {
      if (!existsSync(path)) {
        io.err(`${path}: no such file or folder`);
        problems += 1;
        continue;
      }
      for (const record of await readManifestsAt(path)) {
        checked += 1;
        if (record.ok) {
          io.out(`ok  ${record.file} (${record.compiled.manifest.id} ${record.compiled.manifest.version}, ${record.compiled.actions.length} actions)`);
          continue;
        }
        for (const issue of record.issues) {
          problems += 1;
          io.err(`${issue.file}#${issue.pointer}: ${issue.code} ${issue.message}`);
        }
      }
    }
    io.out(`${checked} manifest(s) checked, ${problems} problem(s)`);
    return problems > 0 ? EXIT_PROBLEMS : EXIT_OK;
  },
};
