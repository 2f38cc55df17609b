/** A Markdown table of a result, with a list of links to the blocks whose ids it shows. */
export function markdownTable(columns: readonly string[], rows: readonly unknown[][], blocks: readonly { id: string; link: string }[]): string {
  if (columns.length === 0) return '';
  const cell = (value: unknown): string => (value === null || value === undefined ? '' : String(value)).replace(/\|/g, '\\|').replace(/\r?\n/g, '<br>');
  const lines = [
    `| ${columns.map(cell).join(' | ')} |`,
    `| ${columns.map(() => '---').join(' | ')} |`,
    ...rows.map((row) => `| ${row.map(cell).join(' | ')} |`),
  ];
  if (blocks.length > 0) lines.push('', 'Blocks:', ...blocks.map((block) => `- [${block.id}](${block.link})`));
  return lines.join('\n');
}
