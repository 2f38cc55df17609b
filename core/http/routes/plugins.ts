import { Hono } from 'hono';
import type { Kernel } from '../../kernel.js';
import { recordId } from '../../plugins/catalog-checks.js';
import type { ManifestRecord } from '../../manifest/load-manifests.js';
import type { RegisteredAction } from '../../registry/action-registry.js';
import type { HttpEnv } from '../http-env.js';
import { requireRole } from '../middleware/require-role.js';
import type { JsonSchema } from '../openapi/openapi-types.js';
import { bodyValidator, readJsonBody } from '../read-body.js';

export const PLUGIN_ENABLED_BODY: JsonSchema = {
  type: 'object',
  required: ['enabled'],
  additionalProperties: false,
  properties: { enabled: { type: 'boolean' } },
};
const parseEnabled = bodyValidator<{ enabled: boolean }>(PLUGIN_ENABLED_BODY);

/** `GET /api/plugins`: every plugin found, whether it is active, and the effects of each of its actions. */
export function pluginRoutes(kernel: Kernel): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  app.get('/', (c) => c.json(pluginsListing(kernel, c.get('principal').role === 'admin')));
  // Enabling or disabling while serving: administrators only; the tools change everywhere at once.
  app.put('/:id', requireRole('admin'), async (c) => {
    const { enabled } = parseEnabled(await readJsonBody(c));
    const id = c.req.param('id');
    await kernel.plugins.setEnabled(id, enabled);
    const matching = kernel.plugins.getCatalog()!.all.filter((candidate) => recordId(candidate) === id);
    const record = matching.find((candidate) => candidate.ok) ?? matching[0]!;
    return c.json({ plugin: describePlugin(kernel, record, kernel.registry.list(), true) });
  });
  return app;
}

/** What `GET /api/plugins` answers (and `quire plugin list` prints): every plugin, external servers, backends. */
export function pluginsListing(kernel: Kernel, isAdmin: boolean): Record<string, unknown> {
  const catalog = kernel.plugins.getCatalog();
  const actions = kernel.registry.list();
  const plugins = (catalog?.all ?? []).map((record) => describePlugin(kernel, record, actions, isAdmin));
  // External MCP servers are plugins too: shown with their exact command (or URL) and tools.
  const external = kernel.externalMcp.describe().map((server) => ({
    ...server, enabled: server.state !== 'disabled', active: server.state === 'connected',
    tools: actions.some((action) => action.pluginId === server.id) ? [{ name: String(server.name).replace(/-/g, '_'), actions: actions.filter((action) => action.pluginId === server.id).map(describeAction) }] : [],
  }));
  return {
    plugins: [...plugins, ...(isAdmin ? external : external.map(({ endpoint: _endpoint, error: _error, ...rest }) => rest))],
    // The embedders and rerankers offered by active plugins, the effects of one call to each, and which is in use.
    backends: kernel.backends.list(),
    // Names in quire.json and grants.json that match nothing, unset token variables: for administrators.
    ...(isAdmin ? { configProblems: kernel.configProblems() } : {}),
  };
}

function describePlugin(kernel: Kernel, record: ManifestRecord, actions: RegisteredAction[], isAdmin: boolean): Record<string, unknown> {
  const id = recordId(record);
  // By id: a broken copy of an active plugin (same id, refused) is not the one active.
  const active = kernel.plugins.isActive(id) && kernel.plugins.problemsOf(record) === undefined && record.ok;
  const settings = kernel.config.plugins.get(id);
  const base = {
    id, source: record.source, enabled: kernel.plugins.isEnabled(id), active,
    trusted: record.source === 'native' || settings?.trusted === true,
    ...(isAdmin ? { file: record.file } : {}),
  };
  // Refused at start (its manifest, config, requirements or activation): listed with why, never with tools.
  const problems = kernel.plugins.problemsOf(record);
  if (problems && base.enabled) return { ...base, state: 'refused', ...(isAdmin ? { problems } : {}), tools: [] };
  if (!record.ok) return { ...base, state: 'invalid', ...(isAdmin ? { issues: record.issues } : {}) };
  const { manifest } = record.compiled;
  const described = {
    ...base, version: manifest.version, description: manifest.description, requires: manifest.requires ?? [], provides: manifest.provides ?? [],
    // What a call to each model backend does (sends data away, costs money), shown before anyone configures one.
    ...(manifest.providers ? { providers: manifest.providers } : {}),
    ...(manifest.embedders ? { embedders: manifest.embedders } : {}),
    ...(manifest.rerankers ? { rerankers: manifest.rerankers } : {}),
  };
  // A disabled plugin has no tools anywhere, not even in this listing.
  if (!active) return { ...described, state: base.enabled ? 'inactive' : 'disabled', tools: [] };
  const own = actions.filter((action) => action.pluginId === id);
  const tools = manifest.tools.map((tool) => ({
    name: tool.name, title: tool.title, description: tool.description,
    actions: own.filter((action) => action.tool === tool.name).map(describeAction),
  }));
  // A plugin in a process of its own: how that process is doing (restarts, the last exit, its sandbox).
  const process = isAdmin ? kernel.plugins.processOf(id) : undefined;
  return { ...described, state: 'active', ...(process ? { process } : {}), tools };
}

function describeAction(action: RegisteredAction): Record<string, unknown> {
  // Why it cannot work now (and is not offered to the agent): a backend it requires is not selected.
  const unavailable = action.unavailable?.();
  return {
    name: action.action, wireName: action.wireName, description: action.spec.description,
    effects: action.effects, declaredEffects: action.declaredEffects,
    destructive: action.spec.destructive === true, idempotent: action.spec.idempotent === true,
    agentOnly: action.spec.agentOnly === true, personOnly: action.spec.personOnly === true, adminOnly: action.spec.adminOnly === true, input: action.spec.input,
    ...(unavailable !== undefined ? { unavailable } : {}),
  };
}
