import type { VNode } from 'preact';
import { html } from '../html.js';

/** One tool call: its name, and, when opened, its arguments and what it answered. */
export function ToolCall({ name, args, output, ok, progress }: { name: string; args: string; output?: string | undefined; ok?: boolean | undefined; progress?: string | undefined }): VNode {
  const state = output === undefined ? 'running' : ok === false ? 'failed' : 'done';
  return html`<details class=${`tool-call tool-${state}`}>
    <summary><code>${name}</code> <span class="muted">${state}${progress ? ` · ${progress}` : ''}</span></summary>
    <h4>Arguments</h4><pre>${pretty(args)}</pre>
    ${output !== undefined ? html`<h4>Result</h4><pre>${output.length > 20_000 ? `${output.slice(0, 20_000)}…` : output}</pre>` : null}
  </details>`;
}

function pretty(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
