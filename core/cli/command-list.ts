import type { Command } from './cli-io.js';

/** A command as `quire --help` lists it, and where its code is. */
export interface CommandEntry {
  name: string;
  summary: string;
  load(): Promise<Command>;
}

/** A command of a module that exports its group of commands as one list. */
function inGroup(name: string, summary: string, group: () => Promise<readonly Command[]>): CommandEntry {
  return {
    name,
    summary,
    async load() {
      const command = (await group()).find((candidate) => candidate.name === name);
      if (!command) throw new Error(`no command '${name}' in its module`);
      return command;
    },
  };
}

const snapshots = async (): Promise<readonly Command[]> => (await import('./commands/snapshot.js')).snapshotCommands;
const notes = async (): Promise<readonly Command[]> => (await import('./commands/notes.js')).notesCommands;
const skills = async (): Promise<readonly Command[]> => (await import('./commands/skill.js')).skillCommands;

/**
 * Every command, with its code loaded only when it runs: loading every command's module for each run
 * (the HTTP server, the MCP SDK and its zod schemas, the chat) made `quire notebooks` load 776 modules
 * instead of 497, about 300 ms of a 1.3 s run, and `quire --help` 0.7 s. The names and summaries are
 * written here so that the list needs no module; a test holds each one equal to its command's own, and
 * every command the modules export present here.
 */
export const COMMANDS: readonly CommandEntry[] = [
  { name: 'serve', summary: 'start the kernel and its HTTP API', load: async () => (await import('./commands/serve.js')).serveCommand },
  { name: 'chat', summary: 'talk with the agent in the terminal, answering its confirmations', load: async () => (await import('./commands/chat.js')).chatCommand },
  { name: 'index rebuild', summary: 'rebuild the SQLite index from the document files', load: async () => (await import('./commands/index-rebuild.js')).indexRebuildCommand },
  { name: 'index embeddings', summary: 'embed the blocks that need it for semantic search, showing progress', load: async () => (await import('./commands/index-embeddings.js')).indexEmbeddingsCommand },
  { name: 'import', summary: 'import a Markdown file or folder into a notebook', load: async () => (await import('./commands/markdown-transfer.js')).importCommand },
  { name: 'export', summary: 'export a notebook or document as Markdown files', load: async () => (await import('./commands/markdown-transfer.js')).exportCommand },
  inGroup('snapshot create', 'take a snapshot of the notes', snapshots),
  inGroup('snapshot list', 'list snapshots, newest first', snapshots),
  inGroup('snapshot diff', 'what changed since a snapshot (or between two)', snapshots),
  inGroup('snapshot rollback', 'make the notes exactly as in a snapshot', snapshots),
  inGroup('snapshot delete', 'delete snapshots and what only they stored', snapshots),
  inGroup('snapshot verify', 'check every stored object against its hash', snapshots),
  { name: 'models pull', summary: 'download a model for the local-models plugin into <workspace>/models/', load: async () => (await import('./commands/models-pull.js')).modelsPullCommand },
  { name: 'models list', summary: 'list the models in <workspace>/models/', load: async () => (await import('./commands/models-pull.js')).modelsListCommand },
  inGroup('notebooks', 'list the notebooks', notes),
  inGroup('docs', 'list the documents of a notebook (or below a document)', notes),
  inGroup('show', 'print a document (or a block) as Markdown', notes),
  inGroup('search', 'search the notes (full text; hybrid when semantic search is on)', notes),
  inGroup('skill list', 'list skills, their prompt cost and the broken ones', skills),
  inGroup('skill show', 'print a skill\'s instructions (or one of its files)', skills),
  inGroup('skill install', 'install skills from a folder, a .zip/.tar.gz or an http(s) URL', skills),
  inGroup('skill remove', 'remove a skill of the workspace', skills),
  inGroup('skill versions', 'a skill\'s earlier versions, newest first (without a name: the skills that have some)', skills),
  inGroup('skill restore', 'put an earlier version back as the skill (the present one is kept as a version)', skills),
  { name: 'usage', summary: 'model and embedding usage and cost, by day, session or model', load: async () => (await import('./commands/usage.js')).usageCommand },
  { name: 'mcp', summary: 'MCP over stdio for clients that launch a command (relays to a serving kernel)', load: async () => (await import('./commands/mcp.js')).mcpCommand },
  { name: 'plugin validate', summary: 'check plugin manifests without loading their code', load: async () => (await import('./commands/plugin-validate.js')).pluginValidateCommand },
  { name: 'plugin list', summary: 'the plugins found, which are active, and why any is refused', load: async () => (await import('./commands/plugin-manage.js')).pluginListCommand },
  { name: 'plugin install', summary: 'check a plugin folder or .tgz, show what it declares, and install it all or nothing', load: async () => (await import('./commands/plugin-manage.js')).pluginInstallCommand },
  { name: 'plugin new', summary: 'scaffold a plugin folder: manifest, TypeScript entry typed by quire/plugin, build', load: async () => (await import('./commands/plugin-new.js')).pluginNewCommand },
  { name: 'audit verify', summary: 'check the audit log\'s hash chain and its anchors', load: async () => (await import('./commands/audit-verify.js')).auditVerifyCommand },
  { name: 'audit anchor', summary: 'print the audit head (seq:hash) to keep, and record it as an anchor', load: async () => (await import('./commands/audit-anchor.js')).auditAnchorCommand },
];
