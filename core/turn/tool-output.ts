import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isDiskFull } from '../fs/disk-full.js';

/** Tool output the model sees at most; the whole text stays on disk. */
export const MAX_TOOL_OUTPUT = 40_000;

export interface PreparedOutput {
  /** What goes to the model: wrapped as untrusted data, cut to MAX_TOOL_OUTPUT with a pointer to the rest. */
  text: string;
  truncated: boolean;
  /** The file holding the whole output, when it was cut. */
  file?: string;
}

/**
 * Tool results are data, never instructions: each is wrapped in [tool_output] markers that the system
 * prompt describes as untrusted. Markers inside the output are defused so that it cannot close the
 * wrapper early and speak as the kernel.
 */
export async function prepareToolOutput(output: string, outputDir: string, callId: string): Promise<PreparedOutput> {
  const safe = defuse(output);
  if (safe.length <= MAX_TOOL_OUTPUT) return { text: wrap(safe), truncated: false };
  const name = `${callId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 100)}.txt`;
  const file = join(outputDir, name);
  const saved = await saveWhole(outputDir, file, output);
  const where = saved ? `The whole output is saved as output/${name} in this session.` : 'The whole output could not be saved: there is no space left on the disk.';
  const note = `\n\n[Output truncated: ${safe.length} characters, the first ${MAX_TOOL_OUTPUT} shown. ${where}]`;
  return { text: wrap(`${safe.slice(0, MAX_TOOL_OUTPUT)}${note}`), truncated: true, ...(saved ? { file } : {}) };
}

/**
 * Writes the whole output beside the session. On a full disk the turn goes on with the cut text (the
 * tool's effect already happened; failing the turn would lose its answer) and no half-written file is left.
 */
async function saveWhole(outputDir: string, file: string, output: string): Promise<boolean> {
  try {
    await mkdir(outputDir, { recursive: true });
    await writeFile(file, output);
    return true;
  } catch (error) {
    if (!isDiskFull(error)) throw error;
    await rm(file, { force: true }).catch(() => undefined);
    return false;
  }
}

/** Text from outside (a tool, a skill someone wrote) inside the untrusted-data markers, defused. */
export function untrustedBlock(text: string): string {
  return wrap(defuse(text));
}

/**
 * A marker's look-alikes too: blanks or invisible characters inside the brackets, full-width brackets
 * or slash (`[/tool_output ]`, `［/tool_output］` passed, and so did the zero-width form this wrote). Each
 * becomes `(tool_output)` or `(/tool_output)`, which reads as no marker.
 */
// Linear: the blanks before a slash and after it are one run each only when there is a slash (two runs
// side by side took time quadratic in a run of blanks after a `[`: 40,000 held the loop 4.4 s).
const MARKER = /[[\uff3b][\s\u200b-\u200d\u2060\ufeff]*(?:([/\uff0f])[\s\u200b-\u200d\u2060\ufeff]*)?tool_output[\s\u200b-\u200d\u2060\ufeff]*[\]\uff3d]/gi;

function defuse(text: string): string {
  return text.replace(MARKER, (_marker, slash: string | undefined) => `(${slash === undefined ? '' : '/'}tool_output)`);
}

function wrap(text: string): string {
  return `[tool_output]\n${text}\n[/tool_output]`;
}
