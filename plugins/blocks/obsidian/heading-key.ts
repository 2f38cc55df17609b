/** Headings match as Obsidian matches them: case, spacing and inline marks aside. */
export function headingKey(text: string): string {
  return text.replace(/[*_`~=]/g, '').replace(/\s+/g, ' ').trim().toLowerCase();
}
