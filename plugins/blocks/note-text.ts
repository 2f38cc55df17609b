/**
 * A note file's bytes as text. UTF-8 (its byte order mark dropped) and UTF-16 with a byte order mark
 * are read; anything else is refused with what to do, rather than read as UTF-8 with every byte that
 * is not replaced by U+FFFD: an older note collection in GB18030, Shift JIS or Windows-1252 came in as
 * rows of replacement characters, its text lost for good once the source was gone.
 */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

export function decodeNoteText(bytes: Uint8Array): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return decodeWith('utf-16le', bytes);
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return decodeWith('utf-16be', bytes);
  try {
    return UTF8.decode(bytes);
  } catch {
    throw new Error('not UTF-8 text (perhaps an older encoding: GB18030, Shift JIS, Windows-1252); convert it to UTF-8, e.g. iconv -f GB18030 -t UTF-8, and import it again');
  }
}

function decodeWith(encoding: 'utf-16le' | 'utf-16be', bytes: Uint8Array): string {
  try {
    return new TextDecoder(encoding, { fatal: true }).decode(bytes);
  } catch {
    throw new Error(`not ${encoding.toUpperCase()} text past its byte order mark; convert it to UTF-8 and import it again`);
  }
}
