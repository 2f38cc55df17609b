import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { FramedChannel } from '../../../core/plugins/framed-channel.js';

/** A channel reading what is written to `input`, with what it heard. */
function listening(maxFrameBytes?: number) {
  const input = new PassThrough();
  const heard: unknown[] = [];
  const errors: string[] = [];
  const channel = new FramedChannel(input, { message: (message) => heard.push(message), protocolError: (error) => errors.push(error.message), closed: () => undefined }, maxFrameBytes);
  return { input, heard, errors, channel };
}

/** The bytes a sending channel writes for these messages. */
async function framed(...messages: unknown[]): Promise<Buffer> {
  const pipe = new PassThrough();
  const chunks: Buffer[] = [];
  pipe.on('data', (chunk: Buffer) => chunks.push(chunk));
  const sender = new FramedChannel(pipe, { message: () => undefined, protocolError: () => undefined, closed: () => undefined });
  for (const message of messages) await new Promise<void>((resolve) => sender.send(message, () => resolve()));
  return Buffer.concat(chunks);
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('the framed message channel to a plugin process', () => {
  it('delivers each message whole, however the bytes are cut', async () => {
    const messages = [{ type: 'result', id: 1, value: { text: '读书 notes', when: new Date(0), bytes: Buffer.from('abc') } }, { type: 'log', message: 'x'.repeat(70_000) }, { type: 'ok' }];
    const bytes = await framed(...messages);
    for (const size of [1, 3, 4, 5, 4096, bytes.length]) {
      const { input, heard, errors } = listening();
      for (let at = 0; at < bytes.length; at += size) input.write(bytes.subarray(at, at + size));
      await tick();
      expect([size, heard]).toEqual([size, messages]);
      expect(errors).toEqual([]);
    }
  });

  it('stops at a frame that does not deserialize or is over the limit, and reads nothing after it', async () => {
    const garbage = Buffer.alloc(20, 0xff);
    garbage.writeUInt32BE(16, 0);
    const first = listening();
    first.input.write(Buffer.concat([await framed({ before: true }), garbage, await framed({ after: true })]));
    await tick();
    expect(first.heard).toEqual([{ before: true }]);
    expect(first.errors).toEqual([expect.stringContaining('does not deserialize')]);
    const second = listening(1024);
    const huge = Buffer.alloc(4);
    huge.writeUInt32BE(0xffffffff, 0);
    second.input.write(huge);
    await tick();
    expect(second.errors).toEqual([expect.stringContaining('over the channel\'s limit of 1024')]);
  });

  it('refuses to send a message over the limit, or one that cannot be serialised', () => {
    const { channel } = listening(1024);
    expect(() => channel.send({ text: 'x'.repeat(2000) })).toThrow(/over the channel's limit/);
    expect(() => channel.send({ fn: () => 1 })).toThrow();
  });
});
