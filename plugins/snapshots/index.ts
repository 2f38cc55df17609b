import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { WORKSPACE, definePlugin, type ActionCall, type Principal } from '../../core/index.js';
import { BLOCKS_INDEX } from '../blocks/tokens.js';
import { blockDiff } from './block-diff.js';
import { SnapshotRepo, type FileEntry } from './snapshot-repo.js';
import { rollbackTurn } from './turn-rollback.js';

/** Where a snapshot came from: the person who asked, or the agent's session and turn. */
function originOf(principal: Principal): string {
  return principal.kind === 'agent' ? `agent:${principal.sessionId ?? '-'}/${principal.turnId ?? '-'}` : `${principal.kind}:${principal.name}`;
}

const AGENT_SNAPSHOTS = 'agent.snapshots';

export default definePlugin({
  activate(ctx) {
    const workspace = ctx.get(WORKSPACE);
    const blocks = ctx.get(BLOCKS_INDEX);
    const repo = new SnapshotRepo(join(workspace.root, 'repo'), workspace.dataDir);
    const create = (memo: string, origin: string) => blocks.withWritesPaused(() => repo.create(memo, origin));
    // The turn loop asks for one snapshot before the agent's first write in a turn.
    ctx.provide(AGENT_SNAPSHOTS, {
      snapshot: async (request: { sessionId: string; turnId: string; memo: string }) => ({ id: (await create(request.memo, `agent:${request.sessionId}/${request.turnId}`)).id }),
    });
    ctx.provide('agent.turn-rollback', {
      rollbackTurn: (sessionId: string, turnId: string, force: boolean) => blocks.withWritesPaused(async (ops) => {
        const result = await rollbackTurn(repo, sessionId, turnId, force, (path, op) => blocks.beforeFileChange(path, op, 'kernel:turn-rollback'));
        await ops.syncIndex();
        return result;
      }),
    });
    const summary = (snapshot: { id: string; memo: string; created: string; origin: string; parent: string | null; tags: string[]; files: Record<string, FileEntry> }) =>
      ({ id: snapshot.id, memo: snapshot.memo, created: snapshot.created, origin: snapshot.origin, parent: snapshot.parent, tags: snapshot.tags, files: Object.keys(snapshot.files).length });
    const textOf = async (files: Record<string, FileEntry> | undefined, path: string): Promise<string | undefined> => {
      if (!files) return readFile(join(workspace.dataDir, ...path.split('/')), 'utf8').catch(() => undefined);
      const entry = files[path];
      return entry ? (await repo.objects.get(entry.hash)).toString('utf8') : undefined;
    };
    return {
      snapshot: {
        create: async (input, call: ActionCall) => summary(await create(String((input as { memo?: string }).memo ?? ''), originOf(call.principal))),
        list: async () => ({ snapshots: (await repo.list()).map(summary).reverse() }),
        get: async (input) => repo.get((input as { id: string }).id),
        diff: async (input) => {
          const { from, to } = input as { from: string; to?: string };
          const before = (await repo.get(from)).files;
          const after = to !== undefined ? (await repo.get(to)).files : await repo.scan((await repo.latest())?.files);
          const files = repo.diff(before, after);
          const documents = [];
          for (const path of files.changed.filter((file) => file.endsWith('.json') && !file.endsWith('.notebook.json')).slice(0, 200)) {
            documents.push({ path, blocks: blockDiff(await textOf(before, path), await textOf(to !== undefined ? after : undefined, path)) });
          }
          return { from, to: to ?? 'now', ...files, documents };
        },
        rollback: async (input, call: ActionCall) => {
          const { id } = input as { id: string };
          const by = originOf(call.principal);
          return blocks.withWritesPaused(async (ops) => {
            const restored = await repo.rollback(id, (path, op) => blocks.beforeFileChange(path, op, by));
            await ops.syncIndex();
            return { id, ...restored };
          });
        },
        tag: async (input) => {
          const { id, tag } = input as { id: string; tag: string };
          return summary(await repo.setTags(id, (tags) => [...tags, tag]));
        },
        untag: async (input) => {
          const { id, tag } = input as { id: string; tag: string };
          return summary(await repo.setTags(id, (tags) => tags.filter((existing) => existing !== tag)));
        },
        purge: () => repo.purge(),
        verify: () => repo.verify(),
      },
    };
  },
});
