import type { CliIO } from '../cli-io.js';

/**
 * Control characters other than line ends and tabs: C0 (ESC, carriage return, backspace…), DEL and
 * C1. Text from a model, a note or a plugin's result reached the terminal with them, so an escape
 * sequence in a note (`ESC[8m` conceals, cursor moves overwrite) could hide or disguise the
 * confirmation shown next. Without its ESC a sequence is shown as the harmless characters after it.
 */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

export function printable(text: string): string {
  return text.replace(CONTROL, (char) => (char === '\r' ? '' : '\ufffd'));
}

/** The terminal, with every line and piece of text made printable on the way out. */
export function printableIO<T extends CliIO>(io: T): T {
  return {
    ...io,
    out: (line: string) => io.out(printable(line)),
    err: (line: string) => io.err(printable(line)),
    ...(io.write ? { write: (text: string) => io.write!(printable(text)) } : {}),
  };
}
