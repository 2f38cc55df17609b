// The few protobuf wire-format pieces an ONNX file needs (varints, length-delimited fields, fixed32 floats).
// Written by hand so the test fakes need no protobuf dependency; only writing is needed, never reading.

const WIRE_VARINT = 0;
const WIRE_LENGTH_DELIMITED = 2;
const WIRE_FIXED32 = 5;

/** Appends protobuf fields to a growing buffer; `finish()` returns the encoded message. */
export class ProtobufWriter {
  private readonly chunks: Uint8Array[] = [];
  private length = 0;

  /** An int32/int64/enum/bool field. Negative numbers are written as 10-byte two's complement, as protobuf does. */
  varintField(fieldNumber: number, value: number | bigint): this {
    this.tag(fieldNumber, WIRE_VARINT);
    this.varint(value);
    return this;
  }

  stringField(fieldNumber: number, value: string): this {
    return this.bytesField(fieldNumber, new TextEncoder().encode(value));
  }

  bytesField(fieldNumber: number, value: Uint8Array): this {
    this.tag(fieldNumber, WIRE_LENGTH_DELIMITED);
    this.varint(value.length);
    this.push(value);
    return this;
  }

  /** A nested message field: the nested writer is encoded and added length-delimited. */
  messageField(fieldNumber: number, message: ProtobufWriter): this {
    return this.bytesField(fieldNumber, message.finish());
  }

  floatField(fieldNumber: number, value: number): this {
    this.tag(fieldNumber, WIRE_FIXED32);
    const bytes = new Uint8Array(4);
    new DataView(bytes.buffer).setFloat32(0, value, true);
    this.push(bytes);
    return this;
  }

  /** A repeated integer field written packed (one length-delimited run), as proto3 does and proto2 parsers accept. */
  packedVarintField(fieldNumber: number, values: readonly (number | bigint)[]): this {
    const inner = new ProtobufWriter();
    for (const value of values) inner.varint(value);
    return this.bytesField(fieldNumber, inner.finish());
  }

  finish(): Uint8Array {
    const out = new Uint8Array(this.length);
    let offset = 0;
    for (const chunk of this.chunks) {
      out.set(chunk, offset);
      offset += chunk.length;
    }
    return out;
  }

  private tag(fieldNumber: number, wireType: number): void {
    this.varint((fieldNumber << 3) | wireType);
  }

  private varint(value: number | bigint): void {
    // BigInt.asUintN gives the 64-bit two's complement of negative values, which is what the wire format stores.
    let rest = BigInt.asUintN(64, BigInt(value));
    const bytes: number[] = [];
    do {
      let byte = Number(rest & 0x7fn);
      rest >>= 7n;
      if (rest !== 0n) byte |= 0x80;
      bytes.push(byte);
    } while (rest !== 0n);
    this.push(Uint8Array.from(bytes));
  }

  private push(bytes: Uint8Array): void {
    this.chunks.push(bytes);
    this.length += bytes.length;
  }
}
