/**
 * How close to a scan's start a file's (or folder's) mtime may be before what the scan saw is not
 * trusted by the next one: a change made right after the scan read it, within the same tick of the file
 * system's clock (Linux stamps files from a coarse clock, up to 10 ms a tick), shows the mtime that was
 * recorded. Such "racily clean" entries are read again, as git does. File systems that stamp whole
 * seconds (an mtime that is a whole second) get two.
 */
const RACY_MARGIN_MS = 50;
const COARSE_CLOCK_MARGIN_MS = 2000;

/** Whether an mtime recorded by a scan that began at `scanStarted` (epoch ms) can be trusted later. */
export function settledMtime(mtimeMs: number, scanStarted: number): boolean {
  return mtimeMs < scanStarted - (mtimeMs % 1000 === 0 ? COARSE_CLOCK_MARGIN_MS : RACY_MARGIN_MS);
}
