import { describe, expect, it } from 'vitest';
import { seededUniform } from '../../../fakes/seeded-random.js';
import type { DraftBlock } from '../../../plugins/blocks/block-model.js';
import { markdownToBlocks, markdownToBlocksByFullParser } from '../../../plugins/blocks/markdown-in.js';

/**
 * The import's fast paths (plain paragraphs and headings without micromark, no table construct where
 * no `|` is, GFM's inline constructs removed rather than disabled, pieces) against every byte through
 * the full GFM parser in one piece: the blocks must be identical, content byte for byte.
 */
function both(markdown: string): { fast: DraftBlock[]; full: DraftBlock[] } {
  let a = 0;
  let b = 0;
  return { fast: markdownToBlocks(markdown, () => `b${a++}`), full: markdownToBlocksByFullParser(markdown, () => `b${b++}`) };
}

function expectSame(markdown: string): void {
  const { fast, full } = both(markdown);
  expect(fast, JSON.stringify(markdown)).toEqual(full);
}

const random = seededUniform;

const CJK = ['读书', '写作', '笔记', '知识', '管理', '学习', '思考', '工作', '生活', '时间'];

/** Documents shaped like the benchmark corpus (../shared/bench/corpus.mjs): a heading, 98 paragraphs. */
function realisticDocument(r: () => number, n: number): string {
  const syllables = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'ti', 'vo', 'ze', 'qua', 'ph', 'st', 'or', 'an'];
  const word = (): string => {
    let w = '';
    const length = 1 + Math.floor(Math.pow(r(), 2) * 4);
    for (let i = 0; i < length; i++) w += syllables[Math.floor(r() * syllables.length)];
    return w;
  };
  const parts = [`## ${word()} ${word()} ${word()} ${n}`];
  for (let p = 1; p <= 98; p++) {
    if (p % 25 === 0) {
      let s = '';
      for (let i = 0; i < 10 + Math.floor(r() * 20); i++) s += CJK[Math.floor(r() * CJK.length)]! + (i % 6 === 5 ? '，' : '');
      parts.push(`${s}。`);
      continue;
    }
    const words = Array.from({ length: 20 + Math.floor(r() * 81) }, word);
    let text = words.join(' ');
    if (p % 10 === 0) text += ` #topic${p % 50}#`;
    parts.push(text);
  }
  return `${parts.join('\n\n')}\n`;
}

/** Lines that come close to what the fast path must refuse: pipes, URLs, markers, setext, fences. */
const LINES = [
  'plain words here', 'another line of text', 'x | y', '| a | b |', '| - | - |', '--- | ---', ':-: | :--',
  'see https://example.com/a?b=c', 'www.example.com and more', 'mail me@example.org now', 'http://x.y', 'a@b.c',
  '# heading', '## heading #', '### heading ###', '#hashtag start', '####### seven', '## ', '#', '# tab\theading',
  '- item', '* item', '+ item', '1. one', '2) two', '10. ten', '1234567890. long', '3.14 is pi', '42 is a number',
  '> quote', '>quote', '> [!NOTE]', '```', '```js', '~~~', '$$', 'x^2 $$', '<div>', '</div>', '<!-- c -->', '<!--',
  '-->', '<script>', '</script>', '    indented code', '  two spaces', '\tTabbed', '===', '---', '***', '___', '- - -',
  '[ref]: https://example.com', '[^1]: footnote', '[^1]', '{{embed-id}}', '{not embed', '&amp; entity', '\\# escaped',
  '中文段落，没有空格。', '\u3000全角空格开头', 'trailing nbsp\u00a0', 'trailing spaces   ', 'ends with hash #', 'ends #tag#',
  '- [ ] task', '- [x] done', '((ref-id "anchor"))', '[[wiki]]', 'text with `code` and *em* and **strong**',
  '', '', '', '   ', '\t',
];

function fuzzDocument(r: () => number): string {
  const lines: string[] = [];
  const count = 1 + Math.floor(r() * 30);
  for (let i = 0; i < count; i++) {
    let line = LINES[Math.floor(r() * LINES.length)]!;
    if (r() < 0.15) line = `${' '.repeat(1 + Math.floor(r() * 4))}${line}`;
    if (r() < 0.1) line = `> ${line}`;
    if (r() < 0.1) line += LINES[Math.floor(r() * LINES.length)]!;
    lines.push(line);
    if (r() < 0.35) lines.push('');
  }
  const ending = r() < 0.1 ? '\r\n' : r() < 0.05 ? '\r' : '\n';
  return lines.join(ending) + (r() < 0.5 ? ending : '');
}

describe('the fast paths of the Markdown import give the blocks of the full parser', () => {
  it('on documents shaped like the benchmark corpus', () => {
    const r = random(7);
    for (let n = 0; n < 30; n++) {
      const markdown = realisticDocument(r, n);
      const { fast, full } = both(markdown);
      expect(fast.length).toBe(99);
      expect(fast).toEqual(full);
    }
  });

  it('on edge cases: pipes, URLs, www., emails, markers, setext, fences, line endings', () => {
    const cases = [
      'a | b\n| - | - |\n| 1 | 2 |\n', 'a | b\n- | -\n', 'text\nwith | pipe\n', 'x\n|-|\n',
      'see https://example.com\nand www.example.com\nand me@example.org\n', 'http://a.b/c|d\n',
      'para\n===\n', 'para\n---\n', 'para\n- item\n', 'para\n1. item\n', 'para\n2. item\n', 'para\n# h\n', 'para\n> q\n',
      'para\n```\ncode\n```\n', 'para\n    indented\n', 'para\n  - nested?\n', 'para\n<div>\n', 'para\n$$\nx\n$$\n',
      '# a\ntext right after\n', '# a\n## b\n', '## closing ##\n', '## ends in \\#\n', '#\n', '##\tTab\n', '# x #tag#\n',
      'first\r\nsecond\r\n\r\nthird\r\n', 'one\rtwo\r\rthree', '\ufeffwith a mark\n', '\u3000\n', 'a\u00a0\n\nb\n',
      '- list\n\ncontinues?\n', '- list\n\n  continues\n', '> quote\n\nafter\n', '> quote\nlazy\n\nafter\n',
      '```\nopen fence\n\nstill code\n', '~~~\n\ntext\n~~~\n\nafter\n', '$$\n\nmath\n$$\n', '<!--\n\ncomment\n-->\n\ntext\n',
      '[^1]: note\n\n    more note\n\nafter\n', '[ref]: /url\ntext\n', '{{abc}}\n', '{{abc}}\ntext\n', 'text\n{{abc}}\n',
      '1234567890. not a list\n', '3.14 pi\n', 'a\n\n\n\n', '', '\n\n', 'x', '   x\n', 'A\n    B\n\tC\n',
      `${'word '.repeat(500)}\n\n- a\n- b\n\n${'more '.repeat(500)}\n\n| a |\n| - |\n`,
    ];
    for (const markdown of cases) expectSame(markdown);
  });

  // Its time is no part of what it checks: 11 s on an idle machine, 13-24 s in CI, 35 s once under load.
  it('on 3,000 random documents built from lines near the edges', () => {
    const r = random(42);
    for (let i = 0; i < 3_000; i++) expectSame(fuzzDocument(r));
  }, 120_000);

  it('on long mixed documents cut into pieces', () => {
    const r = random(3);
    for (let i = 0; i < 20; i++) {
      const parts: string[] = [];
      for (let k = 0; k < 60; k++) parts.push(r() < 0.5 ? realisticDocument(r, k).slice(0, 600) : fuzzDocument(r));
      expectSame(parts.join('\n\n'));
    }
  });
});
