import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { VNode } from 'preact';
import { describe, expect, it } from 'vitest';
import type { Block, DraftBlock } from '../../../plugins/blocks/block-model.js';
import { parseRefs, parseTags } from '../../../plugins/blocks/inline-syntax.js';
import { markdownToBlocks } from '../../../plugins/blocks/markdown-in.js';
import { renderInline } from '../../../web/src/notes/inline.js';

/** The tags and references the web app shows for a text: its `a.tag` and `a.ref` elements. */
function shown(text: string): { refs: string[]; tags: string[] } {
  const refs: string[] = [];
  const tags = new Set<string>();
  const walk = (nodes: unknown[]): void => {
    for (const node of nodes) {
      if (node === null || typeof node !== 'object') continue;
      const props = (node as VNode<Record<string, unknown>>).props;
      if (props.class === 'ref') refs.push(String(props['data-ref']));
      if (props.class === 'tag') tags.add(decodeURIComponent(String(props.href).slice('tag:'.length)));
      const children = props.children;
      walk(children === undefined ? [] : Array.isArray(children) ? children : [children]);
    }
  };
  walk(renderInline(text, { blockHref: (id) => `block:${id}`, tagHref: (tag) => `tag:${encodeURIComponent(tag)}` }));
  return { refs, tags: [...tags] };
}

function indexed(text: string): { refs: string[]; tags: string[] } {
  return { refs: parseRefs(text).map((ref) => ref.id), tags: parseTags(text) };
}

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures', 'markdown');

function paragraphs(block: Block | DraftBlock): string[] {
  const own = block.type === 'paragraph' || block.type === 'heading' ? [block.content ?? ''] : [];
  return [...own, ...(block.children ?? []).flatMap(paragraphs)];
}

function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

describe('the references and tags the index records', () => {
  it('are those the web app shows, in links, addresses, code and math alike', () => {
    const cases = [
      'see https://app.example.com/#/board#top now #real#',
      '[Docs #v2# guide](https://example.com) and #after#',
      '<https://example.com/#a#b> #c#',
      '[a](https://example.com/#x#y) z #real#',
      'open [((20240101120000-abcdefg))](https://example.com) ((20240101120000-abcdefh))',
      '`#code#` $#math#$ #tag# \\#escaped# ((20240101120000-abcdefg "Note#Goals")) and ((20240101120000-abcdefh "Note#Plans"))',
      '会议 #重要# 和 https://例子.com/#a#b 以及 [链接 #不是#](https://example.com)',
      '[not a link](two words #t#) and [x]((20240101120000-abcdefg))',
      // Emphasis is read apart, as the web app reads it: an address may start right after its marker,
      // and nothing inside runs past its closing one.
      '**https://app.example.com/#/board#top** ~~https://x.com/#a#~~ _https://x.com/a#b#_ *$a* #t# b$ *a #b* c#',
      // An underscore inside a word, in any script, neither opens nor closes emphasis.
      'Files: _build/ and #build_cache#, see _config.yml then #site_build#, 中文_变量 #标签_一#, 变量_名 and #tag_x#',
    ];
    for (const text of cases) expect([text, indexed(text)]).toEqual([text, shown(text)]);
    expect(indexed(cases[0]!).tags).toEqual(['real']);
    expect(indexed(cases[4]!).refs).toEqual(['20240101120000-abcdefh']);
    expect(indexed(cases[5]!)).toEqual({ refs: ['20240101120000-abcdefg', '20240101120000-abcdefh'], tags: ['tag'] });
    expect(indexed(cases[8]!).tags).toEqual(['t']);
    expect(indexed(cases[9]!).tags).toEqual(['build_cache', 'site_build', '标签_一', 'tag_x']);
  });

  it('are those the web app shows for every paragraph of the Markdown fixtures', () => {
    const texts = readdirSync(FIXTURES).filter((name) => name.endsWith('.md'))
      .flatMap((name) => markdownToBlocks(readFileSync(join(FIXTURES, name), 'utf8'), () => 'x').flatMap(paragraphs));
    expect(texts.length).toBeGreaterThan(50);
    for (const text of texts) expect([text, indexed(text)]).toEqual([text, shown(text)]);
  });

  it('are read in one pass however hostile the text: unclosed labels, addresses, math, code and emphasis', () => {
    // Each of these would be searched to its end from every opener by a scanner without the web app's bounds.
    for (const text of ['['.repeat(200_000), '[a]('.repeat(50_000), '<http://'.repeat(40_000), '$a'.repeat(100_000), `https://${'#a'.repeat(100_000)}`, '`#'.repeat(100_000),
      '*[a* '.repeat(40_000), '*<http://a* '.repeat(20_000), '**~~a** '.repeat(25_000), '_a '.repeat(60_000), '*a *'.repeat(50_000)]) {
      expect(parseTags(`${text} #end#`).at(-1)).toBe('end');
    }
  });

  it('agree with the web app on 20,000 random texts of links, addresses, code, math, emphasis, references and tags', () => {
    const pieces = ['#', '#t#', '#标签#', ' ', 'a', '[', ']', '(', ')', '](https://e.com/#x#)', '](u)', 'https://e.com/#a#b', ' https://e.com/p#q#', '<https://e.com/#y#>',
      '`#c#`', '$#m#$', '\\', '((20240101120000-abcdefg))', '((20240101120000-abcdefg "N#G"))', '\n', '`', '$', '*', '**', '_', '~~', '==', 'a_b', '中_', '_中'];
    const next = random(7);
    let disagreements = 0;
    const examples: string[] = [];
    for (let n = 0; n < 20_000; n++) {
      let text = '';
      const length = 1 + Math.floor(next() * 16);
      for (let i = 0; i < length; i++) text += pieces[Math.floor(next() * pieces.length)]!;
      if (JSON.stringify(indexed(text)) !== JSON.stringify(shown(text))) {
        disagreements++;
        if (examples.length < 30) examples.push(text);
      }
    }
    expect({ disagreements, examples }).toEqual({ disagreements: 0, examples: [] });
  });
});
