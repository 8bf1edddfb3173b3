import { describe, expect, it } from 'vitest';
import { encodeEventMessage } from '../../../test/fakes/fake-bedrock.ts';
import { createEventStreamDecoder } from './aws-eventstream.ts';
import { signSigV4 } from './aws-sigv4.ts';

describe('SigV4', () => {
  it('signs AWS documentation example (IAM ListUsers, 2015-08-30) to its published signature', () => {
    const h = signSigV4({
      method: 'GET',
      url: 'https://iam.amazonaws.com/?Action=ListUsers&Version=2010-05-08',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded; charset=utf-8' },
      body: '',
      region: 'us-east-1',
      service: 'iam',
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' },
      now: new Date('2015-08-30T12:36:00Z'),
      contentSha256Header: false,
    });
    expect(h.authorization).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7',
    );
  });
});

describe('event-stream decoder', () => {
  const msg = (i: number) =>
    encodeEventMessage({ ':event-type': 'chunk', ':message-type': 'event' }, Buffer.from(`{"n":${i}}`));

  it('decodes messages split at every byte boundary', () => {
    const all = Buffer.concat([msg(1), msg(2), msg(3)]);
    const d = createEventStreamDecoder();
    const got: string[] = [];
    for (let i = 0; i < all.length; i++) for (const m of d.push(all.subarray(i, i + 1))) got.push(m.payload.toString());
    d.end();
    expect(got).toEqual(['{"n":1}', '{"n":2}', '{"n":3}']);
  });

  it('refuses a message whose checksum does not match', () => {
    const bad = Buffer.from(msg(1));
    bad.writeUInt8(bad.readUInt8(bad.length - 6) ^ 0xff, bad.length - 6);
    expect(() => createEventStreamDecoder().push(bad)).toThrow(/message checksum/);
    const badPrelude = Buffer.from(msg(1));
    badPrelude.writeUInt8(badPrelude.readUInt8(9) ^ 0xff, 9);
    expect(() => createEventStreamDecoder().push(badPrelude)).toThrow(/prelude checksum/);
  });

  it('reports a stream cut inside a message', () => {
    const d = createEventStreamDecoder();
    d.push(msg(1).subarray(0, 20));
    expect(() => d.end()).toThrow(/truncated/);
  });
});
