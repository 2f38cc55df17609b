import { inject, injectable } from '../di.js';
import { WORKSPACE } from '../core-tokens.js';
import { NotFoundError, KernelError } from '../errors.js';
import { writeJsonAtomic } from '../fs/atomic-write.js';
import { newId } from '../ids.js';
import { readJsonFile } from '../util/json-file.js';
import { SerialQueue } from '../util/serial-queue.js';
import type { Workspace } from '../workspace.js';
import type { Grant, GrantInput } from './grant.js';
import { grantsFileValidator } from './grants-file-schema.js';
import { formatIssues, runValidator } from '../schema/ajv.js';

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
    const raw = await readJsonFile<unknown>(this.workspace.grantsFile, { version: 1, grants: [] });
    const result = runValidator<GrantsFile>(grantsFileValidator(), raw);
    if (!result.ok) {
      throw new KernelError('WORKSPACE_INVALID', `${this.workspace.grantsFile}: ${formatIssues(result.issues)}`, { details: { file: this.workspace.grantsFile, issues: result.issues } });
    }
    this.grants = result.value.grants;
  }

  list(): readonly Grant[] {
    return this.grants;
  }

  add(input: GrantInput): Promise<Grant> {
    // A grant that has already expired would never match: refused rather than stored as if it worked.
    if (input.expiresAt !== undefined && !(Date.parse(input.expiresAt) > Date.now())) {
      const message = `expiresAt ${input.expiresAt} is not in the future: the grant would never match`;
      return Promise.reject(new KernelError('INVALID_INPUT', message, { details: { issues: [{ pointer: '/expiresAt', message }] } }));
    }
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
