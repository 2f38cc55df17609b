/** Names a model, an MCP client or a URL sees for one action; the only place that builds them. */
export const WIRE_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

export function wireName(tool: string, action: string): string {
  return `${tool}_${action}`;
}

/** A plugin's id, as the manifest schema's `id` has it (kebab-case, at most 64 characters): it names folders too. */
export function isPluginId(id: string): boolean {
  return /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/.test(id) && id.length <= 64;
}

export function isValidWireName(name: string): boolean {
  return WIRE_NAME_PATTERN.test(name);
}
