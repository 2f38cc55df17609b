/**
 * Where a caller's "stop" comes from, read by polling: an AbortSignal (the turn loop) or anything with
 * a `cancelled` flag. Polling from the one interval that also enforces time limits costs nothing per
 * call, where a listener per call cost more than the whole pipeline of a small read.
 */
export type CancelSource = AbortSignal | { readonly cancelled: boolean };

export function isCancelled(source: CancelSource): boolean {
  return 'aborted' in source ? source.aborted : source.cancelled;
}
