/**
 * A note file's bytes as text. UTF-8 (its byte order mark dropped) and UTF-16 (with a byte order mark,
 * or without one when most bytes at one parity are zero, as in such files of Latin text) are read;
 * anything else is refused with what to do, rather than read as UTF-8 with every byte that is not
 * replaced by U+FFFD: an older note collection in GB18030, Shift JIS or Windows-1252 came in as rows
 * of replacement characters, its text lost for good once the source was gone.
 */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

export function decodeNoteText(bytes: Uint8Array): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return decodeWith('utf-16le', bytes);
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return decodeWith('utf-16be', bytes);
  const wide = utf16WithoutMark(bytes);
  if (wide !== undefined) return decodeWith(wide, bytes);
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    const at = firstInvalidUtf8(bytes);
    throw new Error(`not UTF-8 text (the first byte that is not is at offset ${at}): in an older encoding (GB18030, Shift JIS, Windows-1252), convert it to UTF-8, e.g. iconv -f GB18030 -t UTF-8; if only a few bytes are wrong, fix those by hand; then import it again`);
  }
  if (text.includes('\u0000')) throw new Error('holds NUL characters, which no text note does: not a Markdown file, or in an encoding not recognised; convert it to UTF-8 and import it again');
  return text;
}

function decodeWith(encoding: 'utf-16le' | 'utf-16be', bytes: Uint8Array): string {
  try {
    return new TextDecoder(encoding, { fatal: true }).decode(bytes);
  } catch {
    throw new Error(`not ${encoding.toUpperCase()} text throughout; convert it to UTF-8 and import it again`);
  }
}

/**
 * UTF-16 without a byte order mark: an even length, and in the first 1,024 bytes most bytes at one
 * parity zero (Latin text; a `’` or an accent here and there is not) and almost none at the other.
 */
function utf16WithoutMark(bytes: Uint8Array): 'utf-16le' | 'utf-16be' | undefined {
  if (bytes.length < 2 || bytes.length % 2 !== 0) return undefined;
  const pairs = Math.min(bytes.length, 1024) / 2;
  let evenZeros = 0;
  let oddZeros = 0;
  for (let i = 0; i < pairs * 2; i += 2) {
    if (bytes[i] === 0) evenZeros++;
    if (bytes[i + 1] === 0) oddZeros++;
  }
  if (oddZeros >= pairs * 0.9 && evenZeros <= pairs * 0.05) return 'utf-16le';
  if (evenZeros >= pairs * 0.9 && oddZeros <= pairs * 0.05) return 'utf-16be';
  return undefined;
}

/** The offset of the first byte that does not belong to a well-formed UTF-8 sequence. */
function firstInvalidUtf8(bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length;) {
    const b = bytes[i]!;
    const length = b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    if (length === 0 || i + length > bytes.length) return i;
    for (let k = 1; k < length; k++) if ((bytes[i + k]! & 0xc0) !== 0x80) return i;
    // Overlong, surrogate and out-of-range forms: the fatal decoder's verdict stands, checked on the sequence alone.
    if (length > 1) {
      try {
        UTF8.decode(bytes.subarray(i, i + length));
      } catch {
        return i;
      }
    }
    i += length;
  }
  return bytes.length;
}
