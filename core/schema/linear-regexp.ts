import { createRequire } from 'node:module';
import type { RE2JS as RE2JSClass } from 're2js';

/**
 * The regular expressions of schemas the kernel did not write (a user plugin's manifest, an external MCP
 * server's tools) run on the main thread against text from the agent or a server. JavaScript's engine
 * backtracks: a harmless-looking `^([a-z0-9]+\s?)*$` took hours over 40 characters, and the whole kernel
 * with it, before any gate was asked. RE2's engine takes time linear in the text, whatever the pattern;
 * patterns it cannot run (lookarounds, back-references) make the schema refused, with RE2's reason.
 */
const load = createRequire(import.meta.url);
let re2js: typeof RE2JSClass | undefined;

interface RegExpLike {
  test(text: string): boolean;
  toString(): string;
}

/** ajv's `code.regExp` engine: `(pattern, flags) => { test }`, with `code` naming it for generated code. */
export const linearRegExp = Object.assign((pattern: string, flags: string): RegExpLike => {
  re2js ??= (load('re2js') as { RE2JS: typeof RE2JSClass }).RE2JS;
  const compiled = re2js.compile(toRe2Syntax(pattern), flags.includes('i') ? re2js.CASE_INSENSITIVE : 0);
  // ajv keeps compiled patterns by their toString(): without one, every pattern was "[object Object]"
  // and a schema was checked with the first pattern ever compiled.
  const key = `/${pattern}/${flags}`;
  return { test: (text) => compiled.test(text), toString: () => key };
}, { code: 'require("re2js").RE2JS.compile' });

/** JavaScript's `\uXXXX` and `\u{X…}` escapes, which RE2 writes `\x{…}`; an escaped backslash is kept. */
export function toRe2Syntax(pattern: string): string {
  return pattern.replace(/\\(\\|u\{([0-9a-fA-F]{1,6})\}|u([0-9a-fA-F]{4}))/g, (whole, _escape: string, braced: string | undefined, four: string | undefined) => {
    const hex = braced ?? four;
    return hex === undefined ? whole : `\\x{${hex}}`;
  });
}
