declare const tokenType: unique symbol;

/**
 * A typed DI token: a registered symbol whose description is the capability name a manifest lists in
 * `requires`/`provides`, so one string ties a manifest's declaration to the service a plugin gets.
 * Being a symbol, it can be given to tsyringe's `@inject(TOKEN)` directly.
 */
export type Token<T> = symbol & { readonly [tokenType]?: T };

const TOKEN_NAME = /^[a-z][a-z0-9-]*\.[a-z][a-z0-9.-]*$/;
const PREFIX = 'quire:';

/**
 * Creates a typed token, e.g. `createToken<Workspace>('core.workspace')`. `Symbol.for` makes the same
 * name give the same token in every copy of the module (sources under test, built output, user plugins).
 */
export function createToken<T>(name: string): Token<T> {
  if (!TOKEN_NAME.test(name)) throw new TypeError(`token name must look like 'owner.name', got '${name}'`);
  return Symbol.for(`${PREFIX}${name}`) as Token<T>;
}

/** The capability name of a token: `core.workspace` for `createToken('core.workspace')`. */
export function tokenName(token: symbol): string {
  const description = token.description ?? '';
  return description.startsWith(PREFIX) ? description.slice(PREFIX.length) : description;
}
