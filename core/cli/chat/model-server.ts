import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

interface ModelSection {
  plugins?: { providers?: { config?: { model?: { provider?: unknown; baseURL?: unknown } } } };
}

/**
 * Names the model's server the way quire.json configures it (plugins.providers.config.model.baseURL),
 * so that "cannot be reached" says where. Read as plain JSON: whichever kernel validated the file,
 * this only needs two strings from it.
 */
export async function modelServerName(workspaceRoot: string): Promise<string> {
  try {
    const config = JSON.parse(await readFile(join(workspaceRoot, 'quire.json'), 'utf8')) as ModelSection;
    const model = config.plugins?.providers?.config?.model;
    if (typeof model?.baseURL === 'string') return `the model server at ${model.baseURL}`;
    if (typeof model?.provider === 'string') return `the ${model.provider} server at its default address (plugins.providers.config.model.baseURL sets another)`;
  } catch { /* no file or no model: named in general terms */ }
  return 'the model server';
}
