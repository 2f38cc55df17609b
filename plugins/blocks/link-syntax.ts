/**
 * Markdown links as the imports and exports read and write them, in one place: the patterns (each
 * scans a line once: a label may not start after a backslash, or from each escaped `[` a scan ran to
 * the line's end), and how a file name becomes a link's destination and back.
 */

/** A link or image: label, destination (in pointy brackets, or bare with escapes), an optional title. */
export const MARKDOWN_LINK = /(!?)(?<!\\)\[((?:[^[\]\n\\]|\\.)*)\]\((?:<([^<>\n]+)>|((?:[^()\s<>\\]|\\.)+))((?:[ \t]+"[^"\n]*")?)\)/g;

/**
 * A link or image to a file of the workspace's `assets/` folder, as imports write them: the name may
 * hold escaped parentheses (`a\(1\).png`, a SiYuan import's), the label escaped brackets; a title may follow.
 */
export const ASSET_LINK = /(!?)(?<!\\)\[((?:[^[\]\n\\]|\\.)*)\]\(assets\/((?:[^()\s\\]|\\.)+)((?:[ \t]+"[^"\n]*")?)\)/g;

/** A destination with a scheme (`https:`, `mailto:`): nothing on this machine. */
export const REMOTE_LINK = /^[a-z][a-z0-9+.-]*:/i;

/**
 * A file name as a link's destination: percent-encoded, parentheses too (encodeURIComponent leaves
 * them), so that `Screenshot (1).png` reads back whole wherever links to `assets/` are looked for.
 */
export function assetHref(name: string): string {
  return encodeURIComponent(name).replace(/\(/g, '%28').replace(/\)/g, '%29');
}

/** A bare destination's file name: its escapes undone, then its percent-encoding, when it is valid. */
export function destinationName(text: string): string {
  return safeDecode(text.replace(/\\(.)/g, '$1'));
}

/** A link's percent-encoded file name decoded, or as it is when it is not valid encoding. */
export function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
