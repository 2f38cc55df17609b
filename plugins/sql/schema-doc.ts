/**
 * What the index's tables and columns mean, for the `sql schema` action, so that a model writing a query
 * need not guess. The column list itself is read from the database; these are the explanations.
 */
interface TableDoc { description: string; columns: Readonly<Record<string, string>> }

export const TABLES: ReadonlyMap<string, TableDoc> = new Map<string, TableDoc>([
  ['notebooks', { description: 'One row per notebook.', columns: {
    id: 'notebook id', name: 'display name', icon: 'icon (may be empty)', sort: 'position among notebooks', access: "'private' (administrators and the agent) or 'published' (readers too)",
  } }],
  ['documents', { description: 'One row per document file.', columns: {
    id: 'document id (also the id of its document block)', notebook: 'notebook id', parent_doc: 'parent document id, NULL at the top of the notebook',
    path: 'file path under data/', hpath: 'titles from the top of the notebook, e.g. /Projects/Quire', title: 'the document title',
    mtime_ms: 'file modification time (ms since 1970)', size: 'file size in bytes',
  } }],
  ['blocks', { description: 'One row per block of every document, the document block included.', columns: {
    id: 'block id (YYYYMMDDhhmmss-xxxxxxx, sortable by creation time)', parent_id: 'parent block id, NULL for a document block',
    root_id: 'id of the document the block belongs to', notebook: 'notebook id', path: 'file path of its document', hpath: 'titles path of its document',
    type: 'document, heading, paragraph, list, listItem, code, math, table, blockquote, callout, thematicBreak, html or embed',
    subtype: 'h1..h6 for headings; ordered, unordered or task for lists (an ordered list of tasks is ordered); task for list items; the info string of a code fence, its language first (js, or js title="a.js"); note, tip, important, warning or caution for callouts',
    content: 'plain text of the block (Markdown removed); the title for a document', markdown: 'the block\'s own Markdown (leaf blocks; empty for containers); NULL when the same as content, so coalesce(markdown, content) gives it always',
    sort: 'position among its siblings', created: 'creation time, ISO 8601 UTC', updated: 'last change, ISO 8601 UTC; a container (list, list item, quote, callout) moves on with any change inside it',
    updated_by: "who changed it (or, for a container, something inside it) last: person:<token name>, agent:<session>/<turn>/<call>, mcp:<token name>/<client> (mcp:<token name> for a client that gave no name) or kernel. Use GLOB 'agent:<session>/<turn>/*' (it uses the index; LIKE does not); type NOT IN ('list', 'listItem', 'blockquote', 'callout') leaves out the containers around a change",
    fingerprint: 'internal change detector',
    checked: "a task list item's checkbox: 0 open, 1 done; NULL for every other block. Open tasks with their text: SELECT i.id, i.root_id, group_concat(c.content, ' ') FROM blocks i JOIN blocks c ON c.parent_id = i.id WHERE i.checked = 0 GROUP BY i.id",
  } }],
  ['attributes', { description: 'Block attributes other than created/updated/updatedBy (which are columns of blocks).', columns: {
    block_id: 'block id', root_id: 'document id', name: 'custom-<name>, name, alias, memo or bookmark', value: 'the value',
  } }],
  ['refs', { description: 'References ((id "anchor")) written in block content.', columns: {
    block_id: 'the block that refers', ordinal: 'order within that block', root_id: 'document of the referring block', def_block_id: 'the block referred to', anchor: 'anchor text, or NULL',
  } }],
  ['tags', { description: 'Tags #tag# written in block content (nested tags as a/b).', columns: {
    block_id: 'block id', tag: 'the tag without #', root_id: 'document id',
  } }],
  ['blocks_fts', { description: "Full-text index over blocks (FTS5, contentless: join blocks ON blocks.rowid = blocks_fts.rowid for the text). Prefer the search tool: the text is prepared before indexing (Chinese, Japanese, Korean and Thai characters are separate tokens, so '读书' is the phrase '\"读 书\"'; ids are stored without their hyphen; subtypes are hex-encoded).", columns: {
    content: 'block text (prepared, see above)', name: 'name attribute', alias: 'alias attribute', memo: 'memo attribute', tags: 'tags', notebook: 'notebook id without its hyphen', path: 'ids of the document path, without hyphens', type: 'block type', subtype: "block subtype as 'x' + hex of its UTF-8 bytes",
  } }],
]);
