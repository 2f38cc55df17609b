import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { mayCrossParts, phraseInstances, unicode61Tokens } from '../../../plugins/search-fulltext/unicode61-tokens.js';

/** SQLite's own tokens for each text: a table made as blocks_fts is (unicode61, remove_diacritics 2), read back through fts5vocab. */
function sqliteTokens(texts: readonly string[]): string[][] {
  const db = new Database(':memory:');
  try {
    db.exec("CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'unicode61 remove_diacritics 2'); CREATE VIRTUAL TABLE v USING fts5vocab(t, instance);");
    const insert = db.prepare('INSERT INTO t (rowid, x) VALUES (?, ?)');
    db.transaction(() => texts.forEach((text, i) => insert.run(i + 1, text)))();
    const out: string[][] = texts.map(() => []);
    for (const row of db.prepare('SELECT term, doc, offset FROM v ORDER BY doc, offset').iterate() as Iterable<{ term: string; doc: number; offset: number }>) out[row.doc - 1]![row.offset] = row.term;
    return out;
  } finally {
    db.close();
  }
}

describe('unicode61Tokens: the tokens FTS5 makes, or undefined', () => {
  it('agrees with SQLite on every character it admits, between letters, alone and between spaces', () => {
    const admitted: string[] = [];
    for (let code = 0x80; code <= 0xffff; code++) {
      if (code >= 0xd800 && code <= 0xdfff) continue;
      const char = String.fromCharCode(code);
      if (unicode61Tokens(char) !== undefined) admitted.push(char);
    }
    // Every range the module names is exercised: Latin letters and separators, kana, ideographs, Hangul.
    expect(admitted.length).toBeGreaterThan(35_000);
    const texts = admitted.flatMap((char) => [`ab${char}cd`, `x ${char} y`, `${char}${char}`]);
    const expected = sqliteTokens(texts);
    const wrong = texts.flatMap((text, i) => {
      const ours = unicode61Tokens(text);
      return JSON.stringify(ours) === JSON.stringify(expected[i]) ? [] : [`U+${text.codePointAt(text.length === 2 ? 0 : 2)!.toString(16)} ${JSON.stringify(text)}: ours ${JSON.stringify(ours)}, SQLite ${JSON.stringify(expected[i])}`];
    });
    expect(wrong.slice(0, 20)).toEqual([]);
  });

  it('agrees on ASCII, mixed text and the text the index sees for Chinese', () => {
    const texts = ['Hello, World! e-mail foo_bar 42x', 'Café Ünïcödé naïve façade ÀÉÎÕÜ', ' 知  识  管  理 。, 读 书', 'カタカナ ひらがな 한국어', 'tab\there\nnewline', ''];
    const expected = sqliteTokens(texts);
    texts.forEach((text, i) => expect(unicode61Tokens(text)).toEqual(expected[i]));
  });

  it('answers undefined for characters it does not know', () => {
    for (const text of ['Ελληνικά', 'русский', 'emoji 🙂', 'e\u0301', 'ª', '²', 'µ']) expect(unicode61Tokens(text)).toBeUndefined();
  });
});

describe('phraseInstances and mayCrossParts', () => {
  it('counts every start of the phrase, overlapping ones too', () => {
    expect(phraseInstances(['a', 'a', 'a'], ['a', 'a'])).toBe(2);
    expect(phraseInstances(['a', 'b', 'x', 'a', 'b'], ['a', 'b'])).toBe(2);
    expect(phraseInstances(['a'], ['a', 'b'])).toBe(0);
  });

  it('says when joined parts could hold an instance across a boundary', () => {
    expect(mayCrossParts([['a'], ['b'], ['c']], ['a', 'b', 'c'])).toBe(true);
    expect(mayCrossParts([['x', 'a'], ['b']], ['a', 'b'])).toBe(true);
    expect(mayCrossParts([['a', 'b'], ['c']], ['a', 'b'])).toBe(false);
    expect(mayCrossParts([['a']], ['a', 'b'])).toBe(false);
  });
});
