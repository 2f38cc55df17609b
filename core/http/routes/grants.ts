import { Hono } from 'hono';
import type { Kernel } from '../../kernel.js';
import { NotFoundError } from '../../errors.js';
import { NOTEBOOK_SCOPE, type NotebookScope } from '../../gate/notebook-scope.js';
import type { HttpEnv } from '../http-env.js';
import type { JsonSchema } from '../openapi/openapi-types.js';
import { bodyValidator, readJsonBody } from '../read-body.js';
import { instantOf } from '../instant.js';

interface NewGrantBody {
  plugin: string;
  tool: string;
  action: string;
  notebook?: string;
  expiresAt?: string;
}

export const NEW_GRANT_BODY: JsonSchema = {
  type: 'object',
  required: ['plugin', 'tool', 'action'],
  additionalProperties: false,
  properties: {
    plugin: { type: 'string', minLength: 1 },
    tool: { type: 'string', minLength: 1 },
    action: { type: 'string', minLength: 1 },
    notebook: { type: 'string', minLength: 1 },
    expiresAt: { type: 'string', format: 'date-time' },
  },};
const parseNewGrant = bodyValidator<NewGrantBody>(NEW_GRANT_BODY);

/** Standing permissions: list, create (the person granting ahead of time) and revoke. Admin only. */
export function grantRoutes(kernel: Kernel): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  app.get('/', (c) => c.json({ grants: kernel.grants.list() }));
  app.post('/', async (c) => {
    const body = parseNewGrant(await readJsonBody(c));
    const action = kernel.registry.find(body.plugin, body.tool, body.action);
    if (!action) throw new NotFoundError('ACTION_NOT_FOUND', `no action '${body.plugin}/${body.tool}/${body.action}' is available`, { details: { field: 'action' } });
    // A grant for a notebook that is not there was made, and could never match (the README promised 404).
    if (body.notebook !== undefined && !notebookExists(kernel, body.notebook)) {
      throw new NotFoundError('NOT_FOUND', `no notebook '${body.notebook.slice(0, 60)}'`, { details: { field: 'notebook' } });
    }
    const grant = await kernel.grants.add({
      plugin: body.plugin, tool: body.tool, action: body.action, effects: [...action.effects],
      ...(body.notebook !== undefined ? { notebook: body.notebook } : {}),
      ...(body.expiresAt !== undefined ? { expiresAt: instantOf(body.expiresAt, 'expiresAt') } : {}),
      createdBy: `person:${c.get('principal').name}`,
    });
    return c.json({ grant }, 201);
  });
  app.delete('/:id', async (c) => c.json({ revoked: await kernel.grants.revoke(c.req.param('id')) }));
  return app;
}

/** Whether a notebook is there, as the notes plugin knows it (without it, no notebook is). */
function notebookExists(kernel: Kernel, id: string): boolean {
  if (!kernel.container.isRegistered(NOTEBOOK_SCOPE, true)) return false;
  return kernel.container.resolve<NotebookScope>(NOTEBOOK_SCOPE).privacy().some((notebook) => notebook.id === id);
}
