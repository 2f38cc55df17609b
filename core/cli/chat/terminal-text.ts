import type { CliIO } from '../cli-io.js';

/**
 * Control characters other than line ends and tabs: C0 (ESC, backspace…), DEL and C1, and the
 * directional marks and overrides a terminal that lays out bidirectional text obeys. Text from a
 * model, a note or a plugin's result reached the terminal with them, so an escape sequence in a note
 * (`ESC[8m` conceals, cursor moves overwrite) or a right-to-left override could hide or disguise the
 * confirmation shown next. Without its ESC a sequence is shown as the harmless characters after it.
 */
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** A carriage return (with its line feed or alone) is a line end: alone it went back over the line shown. */
export function printable(text: string): string {
  return text.replace(/\r\n?/g, '\n').replace(CONTROL, '\ufffd');
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
