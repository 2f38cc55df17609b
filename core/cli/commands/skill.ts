import { resolve } from 'node:path';
import { EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, type CliIO, type Command } from '../cli-io.js';
import { callAction, describeError, withKernel } from '../one-shot-kernel.js';
import { parseOptions } from '../parse-options.js';

type Values = Record<string, string | boolean | undefined>;

interface Listed { name: string; description: string; folder: string; tokens: number; inPrompt: boolean; files: number; warnings: string[]; updatedBy?: string }
interface Installed { name: string; folder: string; files: string[]; replaced?: boolean; replaces?: boolean; warnings: string[] }

/** `quire skill <verb>`: the skills plugin's actions from the terminal, as the person at it. */
function skillCommand(verb: string, summary: string, usage: string, options: { replace?: boolean; dryRun?: boolean; file?: boolean; positionals: number },
  call: (positionals: string[], values: Values) => { target: string; input: Record<string, unknown> } | undefined,
  print: (result: Record<string, unknown>, io: CliIO) => number): Command {
  const extra = [
    ...(options.file ? ['  -f, --file <path>       one file of the skill folder instead of its instructions'] : []),
    ...(options.replace ? ['      --replace           replace skills of the same name'] : []),
    ...(options.dryRun ? ['      --dry-run           list what would be written, write nothing'] : []),
  ];
  return {
    name: `skill ${verb}`,
    summary,
    help: [`Usage: quire skill ${usage} [--workspace <dir>]`, '', 'Options:', '  -w, --workspace <dir>   workspace folder (default: ./workspace)', ...extra].join('\n'),
    async run(args, io) {
      // Each verb takes only its own flags: all four were taken by every verb, and `skill remove --dry-run`
      // removed the skill.
      const parsed = parseOptions(args, {
        workspace: { type: 'string', short: 'w' },
        ...(options.file ? { file: { type: 'string', short: 'f' } } : {}),
        ...(options.replace ? { replace: { type: 'boolean' } } : {}),
        ...(options.dryRun ? { 'dry-run': { type: 'boolean' } } : {}),
      }, io, `skill ${verb}`, { max: options.positionals });
      if (!parsed) return EXIT_USAGE;
      if (parsed.values.help) return io.out(this.help), EXIT_OK;
      const request = call(parsed.positionals, parsed.values);
      if (!request) {
        io.err(`quire skill ${verb}: ${this.help.split('\n')[0]}`);
        return EXIT_USAGE;
      }
      try {
        const result = await withKernel(String(parsed.values.workspace ?? './workspace'), io, (kernel) => callAction(kernel, request.target, request.input, io));
        return print(result, io);
      } catch (error) {
        // The action's words name its input field; here the flag says it.
        io.err(`quire skill ${verb}: ${describeError(error).replace('install with replace: true to replace it', 'run it again with --replace to replace it')}`);
        return EXIT_PROBLEMS;
      }
    },
  };
}

function printList(result: Record<string, unknown>, io: CliIO): number {
  const skills = (result.skills ?? []) as Listed[];
  const broken = (result.broken ?? []) as { path: string; problem: string; message: string }[];
  for (const skill of skills) {
    io.out(`${skill.name}  ${skill.tokens} tokens${skill.inPrompt ? '' : '  (left out of the prompt: over the token budget)'}  ${skill.folder}${skill.updatedBy ? `  by ${skill.updatedBy}` : ''}`);
    io.out(`    ${skill.description.replace(/\s+/g, ' ')}`);
    for (const warning of skill.warnings) io.out(`    warning: ${warning}`);
  }
  io.out(`${skills.length} skill(s), ${String(result.promptTokens)} of ${String(result.promptTokenBudget)} prompt tokens${broken.length ? `, ${broken.length} broken` : ''}`);
  for (const entry of broken) io.err(`broken ${entry.path}: ${entry.problem}: ${entry.message}`);
  return EXIT_OK;
}

function printInstall(result: Record<string, unknown>, io: CliIO): number {
  const dry = result.dryRun === true;
  for (const skill of ((dry ? result.wouldWrite : result.installed) ?? []) as Installed[]) {
    io.out(`${dry ? 'would write' : 'wrote'} ${skill.folder}${(skill.replaced ?? skill.replaces) ? ' (replacing the skill there)' : ''}`);
    for (const file of skill.files) io.out(`    ${file}`);
    for (const warning of skill.warnings) io.out(`    warning: ${warning}`);
  }
  for (const path of (result.ignored ?? []) as string[]) io.out(`ignored ${path} (outside any skill)`);
  return EXIT_OK;
}

export const skillCommands: readonly Command[] = [
  skillCommand('list', 'list skills, their prompt cost and the broken ones', 'list', { positionals: 0 }, () => ({ target: 'skill_list', input: {} }), printList),
  skillCommand('show', "print a skill's instructions (or one of its files)", 'show <name> [--file <path>]', { file: true, positionals: 1 },
    ([name], values) => (name ? { target: 'skill_load', input: { name, ...(typeof values.file === 'string' ? { file: values.file } : {}) } } : undefined),
    (result, io) => {
      if (typeof result.text === 'string') return io.out(result.text), EXIT_OK;
      io.out(`${String(result.name)}: ${String(result.description)}`);
      for (const warning of (result.warnings ?? []) as string[]) io.out(`warning: ${warning}`);
      io.out('');
      io.out(String(result.body));
      const files = (result.files ?? []) as string[];
      if (files.length > 0) io.out(`\nfiles: ${files.join(', ')}`);
      return EXIT_OK;
    }),
  skillCommand('install', 'install skills from a folder, a .zip/.tar.gz or an http(s) URL', 'install <folder|archive|url> [--replace] [--dry-run]', { replace: true, dryRun: true, positionals: 1 },
    ([source], values) => {
      if (!source) return undefined;
      const flags = { ...(values.replace ? { replace: true } : {}), ...(values['dry-run'] ? { dryRun: true } : {}) };
      return /^https?:\/\//i.test(source) ? { target: 'skill_install_url', input: { url: source, ...flags } } : { target: 'skill_install', input: { path: resolve(source), ...flags } };
    }, printInstall),
  skillCommand('remove', 'remove a skill of the workspace', 'remove <name>', { positionals: 1 }, ([name]) => (name ? { target: 'skill_remove', input: { name } } : undefined),
    (result, io) => { io.out(`removed ${String(result.removed)} (${((result.files ?? []) as string[]).length} file(s))`); return EXIT_OK; }),
  skillCommand('versions', "a skill's earlier versions, newest first (without a name: the skills that have some)", 'versions [<name>]', { positionals: 1 },
    ([name]) => ({ target: 'skill_versions', input: name ? { name } : {} }),
    (result, io) => {
      if (Array.isArray(result.skills)) {
        if (result.skills.length === 0) io.out('no skill has earlier versions');
        for (const skill of result.skills as (string | { name: string; versions?: number })[]) io.out(typeof skill === 'string' ? skill : `${skill.name}${skill.versions !== undefined ? `  (${skill.versions})` : ''}`);
        return EXIT_OK;
      }
      const versions = (result.versions ?? []) as { version: string; op: string; by: string; time: string; files: string[] }[];
      if (versions.length === 0) io.out(`no earlier versions of ${String(result.name)}`);
      for (const entry of versions) io.out(`${entry.version}  ${entry.op} by ${entry.by}  ${entry.files.length} file(s)`);
      return EXIT_OK;
    }),
  skillCommand('restore', 'put an earlier version back as the skill (the present one is kept as a version)', 'restore <name> <version>', { positionals: 2 },
    ([name, version]) => (name && version ? { target: 'skill_restore_version', input: { name, version } } : undefined),
    (result, io) => { io.out(`restored ${String(result.name)} to ${String(result.version)} (${((result.files ?? []) as string[]).length} file(s))`); return EXIT_OK; }),
];
