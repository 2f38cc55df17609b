import { describe, expect, it } from 'vitest';
import { renderAnswer } from '../../web/src/agent/answer-markdown.js';
import { show } from './show-nodes.js';

describe('an agent\'s answer as Markdown', () => {
  it('renders paragraphs, headings, lists, quotes and code fences, the notes\' inline marks inside', () => {
    const answer = ['# Plan', '', 'Two **things**:', '', '- first', '- second', '', '1. one', '2. two', '', '> quoted', '', '```ts', 'const a = 1;', '```'].join('\n');
    expect(show(renderAnswer(answer))).toBe('<h3>Plan</h3><p>Two <strong>things</strong>:</p><ul><li>first</li><li>second</li></ul><ol><li>one</li><li>two</li></ol><blockquote><p>quoted</p></blockquote><pre class=code><code data-lang=ts>const a = 1;</code></pre>');
  });

  it('closes a fence only with a line of its own character, at least as long', () => {
    const answer = ['```', '```python is great', '```', 'after', '````', '```', '````', '~~~', 'tilde', '~~~~'].join('\n');
    expect(show(renderAnswer(answer))).toBe('<pre class=code><code>```python is great</code></pre><p>after</p><pre class=code><code>```</code></pre><pre class=code><code>tilde</code></pre>');
  });

  it('reads a hostile line (a fence, 200,000 spaces, then a letter) as text, at once: the fence pattern backtracked over every split of the spaces', () => {
    const line = `\`\`\`${' '.repeat(200_000)}!`;
    const nodes = show(renderAnswer(line));
    expect(nodes.startsWith('<p>```')).toBe(true);
    expect(nodes.length).toBeGreaterThan(200_000);
    // A bound on a hang, not a measure of speed: quadratic, this took 25 s; linear, milliseconds.
  }, 10_000);

  it('nests lists under their items, keeps a list whose items have blank lines between them, and keeps its first number', () => {
    // Nested items were flattened into their parent's text; "1. a", "", "2. b" was two lists, both numbered from 1.
    const answer = ['1. Prepare', '   - buy **flour**', '   - heat the oven', '     1. to 200 °C', '', '2. Bake', '', '   Keep an eye on it.', '', '3. Serve', '', 'After.', '', '4. Four', '5. Five', '- bullet', '\t- tabbed under it'].join('\n');
    expect(show(renderAnswer(answer))).toBe('<ol><li>Prepare<ul><li>buy <strong>flour</strong></li><li>heat the oven<ol><li>to 200 °C</li></ol></li></ul></li>'
      + '<li>Bake<p>Keep an eye on it.</p></li><li>Serve</li></ol><p>After.</p><ol start=4><li>Four</li><li>Five</li></ol><ul><li>bullet<ul><li>tabbed under it</li></ul></li></ul>');
  });

  it('shows lists nested past eight levels as text, and reads thousands of them, or of blank lines between items, at once', () => {
    const deep = Array.from({ length: 1_000 }, (_, i) => `${' '.repeat(i * 2)}- level ${i}`).join('\n');
    const shown = show(renderAnswer(deep));
    expect((shown.match(/<ul>/g) ?? []).length).toBe(8);
    expect(shown).toContain('level 999');
    const apart = ['- a', ...Array.from({ length: 50_000 }, () => ''), '- b'].join('\n');
    expect(show(renderAnswer(apart))).toBe('<ul><li>a</li><li>b</li></ul>');
    // A bound on a hang, not a measure of speed.
  }, 10_000);

  it('leaves HTML in an answer as text', () => {
    expect(show(renderAnswer('<img src=x onerror="alert(1)"> and <script>x()</script>'))).toBe('<p><img src=x onerror="alert(1)"> and <script>x()</script></p>');
  });
});
