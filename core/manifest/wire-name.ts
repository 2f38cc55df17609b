/** Names a model, an MCP client or a URL sees for one action; the only place that builds them. */
export const WIRE_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

export function wireName(tool: string, action: string): string {
  return `${tool}_${action}`;
}

export function isValidWireName(name: string): boolean {
  return WIRE_NAME_PATTERN.test(name);
}
