import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';

/** The workspace folder and the paths inside it (DESIGN.md §2). */
export class Workspace {
  readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
  }

  get configFile(): string { return join(this.root, 'quire.json'); }
  get dataDir(): string { return join(this.root, 'data'); }
  get indexDir(): string { return join(this.root, 'index'); }
  get agentDir(): string { return join(this.root, 'agent'); }
  get grantsFile(): string { return join(this.root, 'agent', 'grants.json'); }
  get confirmationsFile(): string { return join(this.root, 'agent', 'confirmations.json'); }
  get auditDir(): string { return join(this.root, 'audit'); }
  get pluginsDir(): string { return join(this.root, 'plugins'); }
  /** Kernel-private files (the generated admin token); created with mode 0700. */
  get privateDir(): string { return join(this.root, '.quire'); }
  get adminTokenFile(): string { return join(this.root, '.quire', 'admin.token'); }
}

/** Opens (and creates, if absent) a workspace folder. */
export async function openWorkspace(root: string): Promise<Workspace> {
  // Frozen: plugins receive this object, and moving its root would move where grants and audit go.
  const workspace = Object.freeze(new Workspace(root));
  await mkdir(workspace.root, { recursive: true });
  return workspace;
}
