import { inject, injectable } from '../di.js';
import { WORKSPACE } from '../core-tokens.js';
import { NotFoundError, KernelError } from '../errors.js';
import { writeJsonAtomic } from '../fs/atomic-write.js';
import { newId } from '../ids.js';
import { readJsonFile } from '../util/json-file.js';
import { SerialQueue } from '../util/serial-queue.js';
import type { Workspace } from '../workspace.js';
import type { Grant, GrantInput } from './grant.js';

/** Standing permissions, each visible and revocable. */
export interface GrantsStore {
  load(): Promise<void>;
  list(): readonly Grant[];
  add(input: GrantInput): Promise<Grant>;
  revoke(id: string): Promise<Grant>;
}

interface GrantsFile {
  version: 1;
  grants: Grant[];
}

/** Grants kept in `<workspace>/agent/grants.json`, cached in memory, rewritten atomically on change. */
@injectable()
export class FileGrantsStore implements GrantsStore {
  private grants: Grant[] = [];
  private readonly queue = new SerialQueue();

  constructor(@inject(WORKSPACE) private readonly workspace: Workspace) {}

  async load(): Promise<void> {
    const file = await readJsonFile<GrantsFile>(this.workspace.grantsFile, { version: 1, grants: [] });
    if (!Array.isArray(file.grants)) {
      throw new KernelError('WORKSPACE_INVALID', `${this.workspace.grantsFile}: 'grants' must be an array`);
    }
    this.grants = file.grants;
  }

  list(): readonly Grant[] {
    return this.grants;
  }

  add(input: GrantInput): Promise<Grant> {
    return this.queue.run(async () => {
      const grant: Grant = { id: newId(), createdAt: new Date().toISOString(), ...input };
      await this.persist([...this.grants, grant]);
      return grant;
    });
  }

  revoke(id: string): Promise<Grant> {
    return this.queue.run(async () => {
      const grant = this.grants.find((candidate) => candidate.id === id);
      if (!grant) throw new NotFoundError('GRANT_NOT_FOUND', `no grant with id '${id}'`, { details: { id } });
      await this.persist(this.grants.filter((candidate) => candidate.id !== id));
      return grant;
    });
  }

  // The file is written before memory changes, so a failed write leaves both as they were.
  private async persist(next: Grant[]): Promise<void> {
    await writeJsonAtomic(this.workspace.grantsFile, { version: 1, grants: next } satisfies GrantsFile);
    this.grants = next;
  }
}
