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

  it('leaves HTML in an answer as text', () => {
    expect(show(renderAnswer('<img src=x onerror="alert(1)"> and <script>x()</script>'))).toBe('<p><img src=x onerror="alert(1)"> and <script>x()</script></p>');
  });
});
