import { existsSync } from 'node:fs';
import { loadNativeManifests, readManifestsAt, type ManifestRecord } from '../../manifest/load-manifests.js';
import { isKernelError } from '../../errors.js';
import { NATIVE_MANIFESTS_DIR } from '../../paths.js';
import { planActivation, type ActivationPlan } from '../../plugins/activation-plan.js';
import type { CliIO } from '../cli-io.js';
import { EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, type Command } from '../cli-io.js';
import { parseOptions } from '../parse-options.js';

export const pluginValidateCommand: Command = {
  name: 'plugin validate',
  summary: 'check plugin manifests without loading their code',
  help: `Usage: quire plugin validate <path>...

Validates plugin manifests against manifests/plugin-manifest.schema.json and the rules a schema cannot
express (semver, kernel range, input schemas that compile, wire names, the entry module exists).
<path> is a manifest file, a plugin folder holding manifest.json, or a folder of manifests.

Then checks the manifests together with this kernel's native plugins, as a start would: unique ids
and wire names, and that every 'requires' is provided without a cycle. A plugin that a start would
refuse is listed with why, including one that requires what a refused plugin provides.

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
    const records: ManifestRecord[] = [];
    for (const path of parsed.positionals) {
      if (!existsSync(path)) {
        io.err(`${path}: no such file or folder`);
        problems += 1;
        continue;
      }
      let found: ManifestRecord[];
      try {
        found = await readManifestsAt(path);
      } catch (error) {
        io.err(`${path}: cannot read: ${(error as Error).message}`);
        problems += 1;
        continue;
      }
      for (const record of found) {
        checked += 1;
        records.push(record);
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
    problems += await crossCheck(records, io);
    io.out(`${checked} manifest(s) checked, ${problems} problem(s)`);
    return problems > 0 ? EXIT_PROBLEMS : EXIT_OK;
  },
};

/**
 * The checks that need every manifest at once, run over the given ones after the native plugins, as the
 * kernel plans a start: shadowed ids and wire names, config-free requirements (missing, cyclic, or
 * provided by a plugin that is itself refused). Problems of the given manifests themselves were printed already.
 */
export async function crossCheck(given: readonly ManifestRecord[], io: CliIO, installed: readonly ManifestRecord[] = [], isEnabled: (id: string) => boolean = () => true): Promise<number> {
  const files = new Set(given.map((record) => record.file));
  const all = [...(await loadNativeManifests(NATIVE_MANIFESTS_DIR)).filter((record) => !files.has(record.file)), ...installed, ...given];
  let plan: ActivationPlan;
  try {
    plan = planActivation(all, { isEnabled, isFatal: () => false });
  } catch (error) {
    if (!isKernelError(error)) throw error;
    io.err(`${error.code} ${error.message}`);
    return 1;
  }
  let problems = 0;
  for (const record of all) {
    // Those already installed are the start's to report (plugin list); the ones given are checked against them.
    if (!record.ok || !files.has(record.file) && installed.includes(record)) continue;
    for (const problem of plan.refused.get(record.file) ?? []) {
      problems += 1;
      io.err(`${record.file}: ${problem.code} ${problem.message}`);
    }
  }
  return problems;
}
