import { describe, expect, it } from 'vitest';
import { renderInline } from '../../web/src/notes/inline.js';
import { show } from './show-nodes.js';

const context = { blockHref: (id: string) => `#/block/${id}`, tagHref: (tag: string) => `#/search?q=${tag}` };

describe('the web app\'s inline renderer', () => {
  it('renders what Quire writes: marks, code, refs, tags, safe links and workspace images', () => {
    expect(show(renderInline('**bold** *em* ~~del~~ `co*de*` $x^2$ ((20240101000000-abcdefg "anchor")) #tag# [site](https://example.com) ![img](assets/a%20b.png)', context))).toBe(
      '<strong>bold</strong> <em>em</em> <del>del</del> <code>co*de*</code> <code class=math>x^2</code> <a class=ref href=#/block/20240101000000-abcdefg data-ref=20240101000000-abcdefg>anchor</a> <a class=tag href=#/search?q=tag>#tag</a> '
      + '<a href=https://example.com rel=noopener noreferrer target=_blank>site</a> <img data-asset=assets/a%20b.png data-alt=img alt=img class=asset></img>',
    );
  });

  it('never makes a link or image of javascript:, data:, protocol-relative or encoded targets, and keeps HTML as text', () => {
    const out = show(renderInline('[a](javascript:alert(1)) [b](JaVaScRiPt:x) [c](data:text/html,x) [d](//evil.example) [e](&#106;avascript:x) ![f](https://evil.example/p.png) ![g](assets/../secret) <img src=x onerror=alert(1)>', context));
    expect(out).not.toMatch(/href=(javascript|JaVa|data|\/\/|&#)/i);
    // The only "<img" is the note's own text; no element was made of it.
    expect(out).not.toMatch(/<img[^>]*src=[^>]*><\/img>/);
    expect(out.endsWith('<img src=x onerror=alert(1)>')).toBe(true);
    expect(out).toContain('<span class=image-off>[image: f]</span>');
  });

  it('reads long runs of unclosed link labels, autolinks and code spans as text, without searching again from every opener', () => {
    // Each of these took time quadratic in its length (a paragraph of `[` froze the tab).
    for (const text of ['['.repeat(200_000), '![x'.repeat(60_000), '<http://'.repeat(40_000), '`'.repeat(100_000) + ' x `', '[a\\'.repeat(50_000), '[]('.repeat(60_000), '\\\\['.repeat(60_000)]) {
      expect(show(renderInline(text, context))).toBe(text.replace(/\\(.)/g, '$1'));
    }
  });

  it('still finds a link or a code span after an opener that did not close', () => {
    expect(show(renderInline('[a] [b](https://x.example) <http://y <https://z.example> `c` ``a`', context))).toBe(
      '[a] <a href=https://x.example rel=noopener noreferrer target=_blank>b</a> <http://y <a href=https://z.example rel=noopener noreferrer target=_blank>https://z.example</a> <code>c</code> ``a`',
    );
  });

  it('closes a code span at the next run of its own length only, found without searching again from each opener', () => {
    // Runs of falling lengths, none closed: each searched the rest of the text (300 KB froze the tab for 10 s).
    const falling = Array.from({ length: 1_400 }, (_, k) => `${'`'.repeat(1_400 - k)}a`).join('');
    expect(show(renderInline(falling, context))).toBe(falling);
    // As CommonMark reads them: a shorter or longer run inside does not close the span.
    expect(show(renderInline('`a``b` and ``c`d`` and ```e``', context))).toBe('<code>a``b</code> and <code>c`d</code> and ```e``');
  });

  it('keeps parentheses that pair inside a link\'s address, and makes no link inside a link\'s text', () => {
    expect(show(renderInline('[Foo](https://en.wikipedia.org/wiki/Foo_(bar)) [p](<https://x.example/a b>)', context))).toBe(
      '<a href=https://en.wikipedia.org/wiki/Foo_(bar) rel=noopener noreferrer target=_blank>Foo</a> <a href=https://x.example/a b rel=noopener noreferrer target=_blank>p</a>',
    );
    // A link's text that reads as another address, a reference or a tag is its text: an anchor in an anchor
    // opened whichever a click landed on.
    expect(show(renderInline('[https://bank.example ((20240101000000-abcdefg "x")) #t# <https://c.example> **bold**](https://evil.example)', context))).toBe(
      '<a href=https://evil.example rel=noopener noreferrer target=_blank>https://bank.example ((20240101000000-abcdefg "x")) #t# <https://c.example> <strong>bold</strong></a>',
    );
  });

  it('makes no tag that runs into a reference: an anchor\'s # ends no tag', () => {
    expect(show(renderInline('#x ((20240101000000-abcdefg "Note#Goals"))', context))).toBe('#x <a class=ref href=#/block/20240101000000-abcdefg data-ref=20240101000000-abcdefg>Note#Goals</a>');
  });

  it('reads a long run of unclosed emphasis as text, without searching it again from every opener', () => {
    const text = '*a '.repeat(20_000);
    expect(show(renderInline(text, context))).toBe(text);
  });
});
