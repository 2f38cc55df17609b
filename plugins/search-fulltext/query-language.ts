/**
 * The query language a person expects, compiled to an FTS5 expression that cannot be a syntax error:
 * every term reaches FTS5 as a double-quoted string (quotes doubled), so nothing typed is ever read as
 * FTS5 syntax. Words must all match; "quoted phrases"; prefix*; OR between two terms; -excluded.
 */
export interface Term {
  /** The text as typed (without quotes, `-` or `*`). */
  text: string;
  prefix: boolean;
  negated: boolean;
}

export type ParsedQuery =
  | { ok: true; expression: string; terms: Term[] }
  | { ok: false; message: string };

const MAX_TERMS = 32;
/** A shorter prefix expands to most of the vocabulary: thousands of doclists to merge for one query. */
const MIN_PREFIX = 3;
const UNSPACED_START = /^[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Thai}]/u;
/** A term must hold a letter or digit: punctuation alone produces no token and would match nothing. */
const HAS_TOKEN = /[\p{L}\p{N}]/u;

/** Splits what was typed into terms and OR markers; an unclosed quote runs to the end. */
export function tokenize(typed: string): (Term | 'OR')[] {
  // Control characters (a NUL ends an FTS5 string early) are spaces here.
  const query = typed.replace(/\p{Cc}/gu, ' ');
  const out: (Term | 'OR')[] = [];
  let i = 0;
  while (i < query.length) {
    while (i < query.length && /\s/u.test(query[i]!)) i++;
    if (i >= query.length) break;
    let negated = false;
    if (query[i] === '-' && i + 1 < query.length && !/\s/u.test(query[i + 1]!)) {
      negated = true;
      i++;
    }
    if (query[i] === '"') {
      const end = query.indexOf('"', i + 1);
      const text = query.slice(i + 1, end === -1 ? query.length : end);
      i = end === -1 ? query.length : end + 1;
      const prefix = query[i] === '*';
      if (prefix) i++;
      out.push({ text, prefix, negated });
      continue;
    }
    let end = i;
    while (end < query.length && !/\s/u.test(query[end]!) && query[end] !== '"') end++;
    let text = query.slice(i, end);
    i = end;
    if (text === 'OR' && !negated) {
      out.push('OR');
      continue;
    }
    const prefix = text.length > 1 && text.endsWith('*');
    if (prefix) text = text.replace(/\*+$/u, '');
    out.push({ text, prefix, negated });
  }
  return out;
}

/** `prepare` applies the index's own text preparation (CJK characters spaced apart) to each term. */
export function parseQuery(query: string, prepare: (text: string) => string): ParsedQuery {
  const tokens = tokenize(query).filter((token) => token === 'OR' || HAS_TOKEN.test(token.text));
  const terms = tokens.filter((token): token is Term => token !== 'OR');
  if (terms.length > MAX_TERMS) return { ok: false, message: `The query has ${terms.length} terms; at most ${MAX_TERMS} are searched at once` };
  // Measured on the word the prefix applies to, as the index splits the text (`".a"*` and `"x a"*` are
  // the prefix `a*` to FTS5, and passed a check of the whole text).
  const short = terms.find((term) => {
    if (!term.prefix) return false;
    const last = prepare(term.text).split(/[^\p{L}\p{N}\p{M}]+/u).filter((token) => token !== '').at(-1) ?? '';
    return !UNSPACED_START.test(last) && [...last].length < MIN_PREFIX;
  });
  if (short) return { ok: false, message: `'${short.text}*' is too short a prefix: give at least ${MIN_PREFIX} letters before the *` };
  const positive: Term[][] = [];
  let joinNext = false;
  for (const token of tokens) {
    if (token === 'OR') {
      joinNext = positive.length > 0;
      continue;
    }
    if (token.negated) continue;
    if (joinNext) positive[positive.length - 1]!.push(token);
    else positive.push([token]);
    joinNext = false;
  }
  if (positive.length === 0) {
    return { ok: false, message: terms.length > 0 ? 'Add at least one word to search for besides the excluded ones' : 'Type at least one word to search for' };
  }
  const quote = (term: Term): string => `"${prepare(term.text).replace(/"/g, '""')}"${term.prefix ? ' *' : ''}`;
  const groups = positive.map((group) => `(${group.map(quote).join(' OR ')})`).join(' AND ');
  const negated = terms.filter((term) => term.negated).map((term) => ` NOT ${quote(term)}`).join('');
  return { ok: true, expression: `(${groups}${negated})`, terms };
}

/** An FTS5 string for an exact value in a filter column (an id, a type): its tokens as one phrase. */
export function phrase(value: string): string {
  return `"${value.replace(/"/g, '""')}"`;
}
