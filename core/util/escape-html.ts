/** `&`, `<` and `>` escaped: text placed in HTML (a search snippet, whose only markup is the <mark>s put around matches). */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
