import { encodeEventMessage } from '@aigw/testkit/fakes';
import { describe, expect, it } from 'vitest';
import { createEventStreamDecoder } from './aws-eventstream.ts';
import { signSigV4 } from './aws-sigv4.ts';

// Published AWS vectors: they prove the library is wired as AWS expects (date, scope, which
// headers are signed, how the path and query are canonicalised), not how it computes.
const EXAMPLE = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const EXAMPLE_DATE = new Date('2015-08-30T12:36:00Z');

describe('SigV4', () => {
  it('signs AWS documentation example (IAM ListUsers, 2015-08-30) to its published signature', async () => {
    const h = await signSigV4({
      method: 'GET',
      url: 'https://iam.amazonaws.com/?Action=ListUsers&Version=2010-05-08',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded; charset=utf-8' },
      body: '',
      region: 'us-east-1',
      service: 'iam',
      credentials: EXAMPLE,
      now: EXAMPLE_DATE,
      contentSha256Header: false,
    });
    expect(h.authorization).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7',
    );
    expect(h['x-amz-date']).toBe('20150830T123600Z');
    expect(h.host).toBe('iam.amazonaws.com');
    expect(h['x-amz-content-sha256']).toBeUndefined();
  });

  it('sorts query parameters by name (AWS test suite get-vanilla-query-order-key-case)', async () => {
    const h = await signSigV4({
      method: 'GET',
      url: 'https://example.amazonaws.com/?Param2=value2&Param1=value1',
      headers: {},
      body: '',
      region: 'us-east-1',
      service: 'service',
      credentials: EXAMPLE,
      now: EXAMPLE_DATE,
      contentSha256Header: false,
    });
    expect(h.authorization).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500',
    );
  });

  it('sends and signs the session token of temporary credentials (AWS test suite post-sts-header-before)', async () => {
    const sessionToken =
      'AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSPfIeoIYRqTflfKD8YUuwthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT38xVqr7ZD0u0iPPkUL64lIZbqBAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLxBA==';
    const h = await signSigV4({
      method: 'POST',
      url: 'https://example.amazonaws.com/',
      headers: {},
      body: '',
      region: 'us-east-1',
      service: 'service',
      credentials: { ...EXAMPLE, sessionToken },
      now: EXAMPLE_DATE,
      contentSha256Header: false,
    });
    expect(h['x-amz-security-token']).toBe(sessionToken);
    expect(h.authorization).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date;x-amz-security-token, Signature=85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead',
    );
  });

  it('sends and signs x-amz-content-sha256 by default', async () => {
    const h = await signSigV4({
      method: 'POST',
      url: 'https://bedrock-runtime.us-east-1.amazonaws.com/model/a%3A0/invoke',
      headers: { 'Content-Type': 'application/json' },
      body: Buffer.from('{}'),
      region: 'us-east-1',
      service: 'bedrock',
      credentials: EXAMPLE,
      now: EXAMPLE_DATE,
    });
    // SHA-256 of `{}`.
    expect(h['x-amz-content-sha256']).toBe('44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a');
    expect(h.authorization).toMatch(/SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date,/);
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
