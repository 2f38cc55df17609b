import type { Duplex } from 'node:stream';
import { deserialize, serialize } from 'node:v8';

/**
 * Messages between the kernel and a plugin's process over a plain pipe: each one a 4-byte length and
 * its structured-clone bytes. It replaces Node's IPC channel, whose parser runs outside any handler of
 * ours: a plugin that wrote bytes of its own making to the channel's descriptor threw inside Node's
 * read callback and ended the kernel, and a length of 4 GB made the kernel buffer it. Here a frame
 * over the limit, or one that does not deserialize, is a protocol error: reading stops and the owner
 * ends the process.
 */
export const MAX_FRAME_BYTES = 64 * 1024 * 1024;

export interface FramedChannelEvents {
  message(message: unknown): void;
  /** The other side broke the protocol; nothing more is read. */
  protocolError(error: Error): void;
  /** The pipe closed (the other side ended or closed it). */
  closed(): void;
}

export class FramedChannel {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private broken = false;
  private isOpen = true;

  constructor(private readonly pipe: Duplex, private readonly events: FramedChannelEvents, private readonly maxFrameBytes = MAX_FRAME_BYTES) {
    pipe.on('data', (chunk: Buffer) => this.take(chunk));
    pipe.on('error', () => this.close());
    pipe.on('close', () => this.close());
    pipe.on('end', () => this.close());
  }

  get open(): boolean {
    return this.isOpen && !this.pipe.destroyed;
  }

  /** Sends one message; `done` runs once it is handed to the pipe (or with the error that stopped it). */
  send(message: unknown, done?: (error?: Error) => void): void {
    if (!this.open) {
      done?.(new Error('the channel is closed'));
      return;
    }
    const body = serialize(message);
    if (body.length > this.maxFrameBytes) throw new RangeError(`a message of ${body.length} bytes is over the channel's limit of ${this.maxFrameBytes}`);
    const header = Buffer.alloc(4);
    header.writeUInt32BE(body.length, 0);
    this.pipe.write(Buffer.concat([header, body]), (error) => done?.(error ?? undefined));
  }

  /** Stops reading and writing. */
  destroy(): void {
    this.broken = true;
    this.pipe.destroy();
  }

  private close(): void {
    if (!this.isOpen) return;
    this.isOpen = false;
    this.events.closed();
  }

  private take(chunk: Buffer): void {
    if (this.broken) return;
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    while (!this.broken && this.pendingBytes >= 4) {
      const head = this.peek(4);
      const length = head.readUInt32BE(0);
      if (length > this.maxFrameBytes) return this.fail(new Error(`a frame of ${length} bytes is over the channel's limit of ${this.maxFrameBytes}`));
      if (this.pendingBytes < 4 + length) return;
      const frame = this.consume(4 + length).subarray(4);
      let message: unknown;
      try {
        message = deserialize(frame);
      } catch (error) {
        return this.fail(new Error(`a frame does not deserialize: ${(error as Error).message}`));
      }
      this.events.message(message);
    }
  }

  private fail(error: Error): void {
    this.broken = true;
    this.pending = [];
    this.pendingBytes = 0;
    this.pipe.pause();
    this.events.protocolError(error);
  }

  /** The first `bytes` bytes, without taking them. */
  private peek(bytes: number): Buffer {
    if (this.pending[0]!.length >= bytes) return this.pending[0]!;
    this.pending = [Buffer.concat(this.pending)];
    return this.pending[0]!;
  }

  private consume(bytes: number): Buffer {
    const all = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending);
    const rest = all.subarray(bytes);
    this.pending = rest.length > 0 ? [rest] : [];
    this.pendingBytes = rest.length;
    return all.subarray(0, bytes);
  }
}
