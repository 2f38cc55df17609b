import type { VNode } from 'preact';
import { memo } from 'preact/compat';
import { useState } from 'preact/hooks';
import { html } from '../html.js';

/**
 * One tool call: its name, and, when opened, its arguments and what it answered. Memoised, and its
 * arguments and result are laid out only while it is open: a long session holds hundreds of calls
 * with results of up to 20,000 characters shown, and each streamed token re-rendered them all.
 */
export const ToolCall = memo(function ToolCall({ name, args, output, ok, progress }: { name: string; args: string; output?: string | undefined; ok?: boolean | undefined; progress?: string | undefined }): VNode {
  const [open, setOpen] = useState(false);
  const state = output === undefined ? 'running' : ok === false ? 'failed' : 'done';
  return html`<details class=${`tool-call tool-${state}`} onToggle=${(event: Event) => setOpen((event.currentTarget as HTMLDetailsElement).open)}>
    <summary><code>${name}</code> <span class="muted">${state}${progress ? ` · ${progress}` : ''}</span></summary>
    ${open ? html`<h4>Arguments</h4><pre>${pretty(args)}</pre>
      ${output !== undefined ? html`<h4>Result</h4><pre>${output.length > 20_000 ? `${output.slice(0, 20_000)}…` : output}</pre>` : null}` : null}
  </details>`;
});

function pretty(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
