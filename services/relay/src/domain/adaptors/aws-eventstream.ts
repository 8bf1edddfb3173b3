/**
 * The AWS event-stream framing of Bedrock's streamed answers (application/vnd.amazon.eventstream):
 * each message is a 12-byte prelude (total length, headers length, CRC32 of those 8 bytes), the
 * headers, the payload, and a CRC32 of everything before it. Messages may straddle reads, so the
 * decoder keeps the unfinished tail. A checksum that does not match ends the stream with an error.
 */
import { crc32 } from 'node:zlib';

export interface EventStreamMessage {
  headers: Record<string, string | number | boolean | Buffer>;
  payload: Buffer;
}

const PRELUDE = 12;
const MAX_MESSAGE = 16 * 1024 * 1024;

function readHeaders(buf: Buffer): EventStreamMessage['headers'] {
  const out: EventStreamMessage['headers'] = {};
  let i = 0;
  while (i < buf.length) {
    const nameLen = buf.readUInt8(i);
    const name = buf.toString('utf8', i + 1, i + 1 + nameLen);
    i += 1 + nameLen;
    const type = buf.readUInt8(i);
    i += 1;
    switch (type) {
      case 0:
        out[name] = true;
        break;
      case 1:
        out[name] = false;
        break;
      case 2:
        out[name] = buf.readInt8(i);
        i += 1;
        break;
      case 3:
        out[name] = buf.readInt16BE(i);
        i += 2;
        break;
      case 4:
        out[name] = buf.readInt32BE(i);
        i += 4;
        break;
      case 5:
      case 8:
        out[name] = Number(buf.readBigInt64BE(i));
        i += 8;
        break;
      case 6:
      case 7: {
        const len = buf.readUInt16BE(i);
        const v = buf.subarray(i + 2, i + 2 + len);
        out[name] = type === 7 ? v.toString('utf8') : Buffer.from(v);
        i += 2 + len;
        break;
      }
      case 9:
        out[name] = Buffer.from(buf.subarray(i, i + 16));
        i += 16;
        break;
      default:
        throw new Error(`event-stream: unknown header type ${type}`);
    }
  }
  return out;
}

/** An incremental decoder: push() the bytes of each read, get the complete messages back. */
export function createEventStreamDecoder(): { push(chunk: Uint8Array): EventStreamMessage[]; end(): void } {
  let pending: Buffer = Buffer.alloc(0);
  return {
    push(chunk) {
      pending = pending.length ? Buffer.concat([pending, chunk]) : Buffer.from(chunk);
      const out: EventStreamMessage[] = [];
      while (pending.length >= PRELUDE) {
        const total = pending.readUInt32BE(0);
        const headersLen = pending.readUInt32BE(4);
        if (crc32(pending.subarray(0, 8)) !== pending.readUInt32BE(8))
          throw new Error('event-stream: prelude checksum mismatch');
        if (total < PRELUDE + 4 + headersLen || total > MAX_MESSAGE)
          throw new Error(`event-stream: bad message length ${total}`);
        if (pending.length < total) break;
        const msg = pending.subarray(0, total);
        if (crc32(msg.subarray(0, total - 4)) !== msg.readUInt32BE(total - 4))
          throw new Error('event-stream: message checksum mismatch');
        out.push({
          headers: readHeaders(msg.subarray(PRELUDE, PRELUDE + headersLen)),
          payload: Buffer.from(msg.subarray(PRELUDE + headersLen, total - 4)),
        });
        pending = pending.subarray(total);
      }
      return out;
    },
    end() {
      if (pending.length > 0) throw new Error('event-stream: truncated message at end of stream');
    },
  };
}
