import { stat } from 'node:fs/promises';

/** Whether anything is at `path` (a file or a folder); an error reading it counts as nothing there. */
export async function pathExists(path: string): Promise<boolean> {
  return stat(path).then(() => true, () => false);
}
