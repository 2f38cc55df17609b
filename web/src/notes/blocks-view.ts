import { Fragment, h, type ComponentChildren, type VNode } from 'preact';
import { memo } from 'preact/compat';
import { html } from '../html.js';
import { renderInline, type InlineContext } from './inline.js';

/** A block as `document_get` answers it. */
export interface BlockData {
  id: string;
  type: string;
  subtype?: string;
  content?: string;
  checked?: boolean;
  start?: number;
  attrs: Record<string, string>;
  children?: BlockData[];
}

export interface BlockActions extends InlineContext {
  /** The block being edited, rendered in place by the caller. */
  editing?: string;
  editor(block: BlockData): VNode;
  canEdit: boolean;
  edit(block: BlockData): void;
  /** Ticks or unticks a task item (only where the person may edit). */
  toggleTask(block: BlockData): void;
}

const LEAF_EDIT = new Set(['heading', 'paragraph', 'code', 'math', 'table', 'html', 'embed', 'thematicBreak']);

/**
 * Blocks as elements, each carrying its id (`data-block`), so a search hit or a reference scrolls to it.
 * Note text is only ever text: an HTML block is shown as its source, math as its TeX, a table cell
 * through the same inline renderer as a paragraph.
 */
export function Blocks({ blocks, actions }: { blocks: readonly BlockData[]; actions: BlockActions }): VNode {
  return h(Fragment, null, blocks.map((block) => html`<${BlockView} key=${block.id} block=${block} actions=${actions} />`));
}

/**
 * Memoised: a block renders again only when it changed (a reload gives every block anew), when the
 * person's right to edit changed, or when the block edited is it or inside it. Without this, every
 * click (Edit, Save, Cancel, History) parsed the Markdown of every block of the document again: 10,000
 * paragraphs took a third of a second, and one hostile paragraph seconds. The actions a skipped block
 * keeps are an older render's: their `edit` must reach the page's current state (a ref), not a copy.
 */
const BlockView = memo(function BlockView({ block, actions }: { block: BlockData; actions: BlockActions }): VNode {
  if (actions.editing === block.id) return actions.editor(block);
  const body = renderBlock(block, actions);
  if (!actions.canEdit || !LEAF_EDIT.has(block.type)) return body;
  return html`<div class="block" data-block=${block.id}>
    ${body}
    <button class="edit" type="button" aria-label="Edit this block" title="Edit" onClick=${() => actions.edit(block)}>✎</button>
  </div>`;
}, (before, after) => before.block === after.block && before.actions.canEdit === after.actions.canEdit
  && !holds(before.block, before.actions.editing) && !holds(after.block, after.actions.editing));

/** Whether the block edited is this one or inside it. */
function holds(block: BlockData, editing: string | undefined): boolean {
  return editing !== undefined && (block.id === editing || (block.children ?? []).some((child) => holds(child, editing)));
}

function renderBlock(block: BlockData, actions: BlockActions): VNode {
  const inline = (text: string | undefined): ComponentChildren[] => renderInline(text ?? '', actions);
  const children = html`<${Blocks} blocks=${block.children ?? []} actions=${actions} />`;
  switch (block.type) {
    case 'heading': {
      const level = Math.min(6, Math.max(1, Number((block.subtype ?? 'h2').slice(1)) || 2));
      const tag = `h${Math.min(6, level + 1)}`;
      return html`<${tag} data-block=${block.id}>${inline(block.content)}</${tag}>`;
    }
    case 'paragraph': return html`<p data-block=${block.id}>${inline(block.content)}</p>`;
    case 'list': {
      const ordered = block.subtype === 'ordered';
      return ordered
        ? html`<ol data-block=${block.id} start=${block.start ?? 1}>${children}</ol>`
        : html`<ul data-block=${block.id} class=${block.subtype === 'task' ? 'tasks' : ''}>${children}</ul>`;
    }
    case 'listItem': return html`<li data-block=${block.id}>${block.subtype === 'task'
      ? html`<input type="checkbox" disabled=${!actions.canEdit} checked=${block.checked === true} aria-label=${block.checked ? 'done' : 'to do'} onChange=${(event: Event) => { (event.target as HTMLInputElement).checked = block.checked === true; actions.toggleTask(block); }} /> `
      : null}${children}</li>`;
    case 'code': return html`<figure class="code" data-block=${block.id}>${block.subtype ? html`<figcaption>${block.subtype}</figcaption>` : null}<pre><code>${block.content ?? ''}</code></pre></figure>`;
    case 'math': return html`<pre class="math" data-block=${block.id} aria-label="math (TeX)">${block.content ?? ''}</pre>`;
    case 'table': return tableView(block, actions);
    case 'blockquote': return html`<blockquote data-block=${block.id}>${children}</blockquote>`;
    case 'callout': {
      const kind = block.subtype ?? 'note';
      const title = block.attrs['custom-callout-title'] ?? (block.attrs['custom-callout'] ?? kind).replace(/^./, (c) => c.toUpperCase());
      return html`<aside class=${`callout callout-${kind}`} data-block=${block.id}><p class="callout-title">${title}</p>${children}</aside>`;
    }
    case 'thematicBreak': return html`<hr data-block=${block.id} />`;
    case 'html': return html`<figure class="html-source" data-block=${block.id}><figcaption>HTML (shown as text, never run)</figcaption><pre><code>${block.content ?? ''}</code></pre></figure>`;
    case 'embed': return html`<div class="embed" data-block=${block.id}>${/^\(\(/.test(block.content ?? '') ? inline(block.content) : html`<code>${block.content ?? ''}</code>`}</div>`;
    case 'document': return html`<div data-block=${block.id}>${children}</div>`;
    default: return html`<p data-block=${block.id}>${inline(block.content)}</p>`;
  }
}

/** A GFM table's source as a table; cells through the inline renderer. */
function tableView(block: BlockData, actions: BlockActions): VNode {
  const rows = (block.content ?? '').split('\n').filter((line) => line.trim() !== '').map(cells);
  const [head, , ...body] = rows;
  const inline = (text: string): ComponentChildren[] => renderInline(text, actions);
  return html`<div class="table" data-block=${block.id}><table>
    ${head ? html`<thead><tr>${head.map((cell) => html`<th>${inline(cell)}</th>`)}</tr></thead>` : null}
    <tbody>${body.map((row) => html`<tr>${row.map((cell) => html`<td>${inline(cell)}</td>`)}</tr>`)}</tbody>
  </table></div>`;
}

function cells(line: string): string[] {
  const trimmed = line.trim().replace(/^\|/, '').replace(/(?<!\\)\|$/, '');
  return trimmed.split(/(?<!\\)\|/).map((cell) => cell.trim().replace(/\\\|/g, '|'));
}
