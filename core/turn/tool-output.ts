import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

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
  const safe = output.replace(/\[(\/?)tool_output\]/gi, '[$1tool_output\u200b]');
  if (safe.length <= MAX_TOOL_OUTPUT) return { text: wrap(safe), truncated: false };
  await mkdir(outputDir, { recursive: true });
  const name = `${callId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 100)}.txt`;
  const file = join(outputDir, name);
  await writeFile(file, output);
  const note = `\n\n[Output truncated: ${safe.length} characters, the first ${MAX_TOOL_OUTPUT} shown. The whole output is saved as output/${name} in this session.]`;
  return { text: wrap(`${safe.slice(0, MAX_TOOL_OUTPUT)}${note}`), truncated: true, file };
}

function wrap(text: string): string {
  return `[tool_output]\n${text}\n[/tool_output]`;
}
