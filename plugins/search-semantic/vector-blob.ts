/** Vectors are stored as little-endian float32 BLOBs (SiYuan's layout), whatever the machine's byte order. */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

export function vectorToBlob(vector: Float32Array): Buffer {
  if (LITTLE_ENDIAN) return Buffer.from(vector.buffer.slice(vector.byteOffset, vector.byteOffset + vector.byteLength));
  const out = Buffer.alloc(vector.length * 4);
  for (let i = 0; i < vector.length; i++) out.writeFloatLE(vector[i]!, i * 4);
  return out;
}

/** Copies the blob's floats into `target` at `offset` (a row of a flat candidate matrix). */
export function blobInto(blob: Buffer, target: Float32Array, offset: number): void {
  const count = blob.length >> 2;
  if (LITTLE_ENDIAN && blob.byteOffset % 4 === 0) {
    target.set(new Float32Array(blob.buffer, blob.byteOffset, count), offset);
    return;
  }
  for (let i = 0; i < count; i++) target[offset + i] = blob.readFloatLE(i * 4);
}

export function blobToVector(blob: Buffer): Float32Array {
  const out = new Float32Array(blob.length >> 2);
  blobInto(blob, out, 0);
  return out;
}
