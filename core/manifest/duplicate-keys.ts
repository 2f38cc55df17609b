/** A key met twice in one object of a JSON text, and where (a JSON pointer to the second). */
export interface DuplicateKey {
  key: string;
  pointer: string;
}

interface Frame {
  /** Keys seen so far in an object; undefined for an array. */
  keys?: Set<string>;
  /** The key whose value is being read (objects), or the element's index (arrays). */
  at: string | number;
}

const escapePointer = (segment: string): string => segment.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * The first key repeated within one object of `text`, which must already be valid JSON. `JSON.parse`
 * keeps the last copy silently: a manifest declaring an action twice was read by a person at its first
 * (destructive, sending data out) and run by the kernel as its second (no effects). One linear pass.
 */
export function firstDuplicateKey(text: string): DuplicateKey | undefined {
  const stack: Frame[] = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      const top = stack.at(-1);
      if (expectKey && top?.keys) {
        // Decoded, so that "wipe" and "w\u0069pe" are one key, as they are to JSON.parse.
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        if (top.keys.has(key)) {
          const path = stack.slice(0, -1).map((frame) => escapePointer(String(frame.at)));
          return { key, pointer: `/${[...path, escapePointer(key)].join('/')}` };
        }
        top.keys.add(key);
        top.at = key;
        expectKey = false;
      }
      i = end;
    } else if (char === '{') {
      stack.push({ keys: new Set(), at: '' });
      expectKey = true;
    } else if (char === '[') {
      stack.push({ at: 0 });
    } else if (char === '}' || char === ']') {
      stack.pop();
      expectKey = false;
    } else if (char === ',') {
      const top = stack.at(-1);
      if (top?.keys) expectKey = true;
      else if (top) top.at = (top.at as number) + 1;
    }
  }
  return undefined;
}
