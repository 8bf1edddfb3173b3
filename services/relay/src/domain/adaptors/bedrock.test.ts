import { type FakeBedrock, startFakeBedrock } from '@aigw/testkit/fakes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bedrockStreamParser, bedrockUrl, parseAwsKey, signBedrock, toBedrockBody } from './bedrock.ts';

let fake: FakeBedrock;
beforeAll(async () => {
  fake = await startFakeBedrock({ region: 'us-west-2', credentials: { AKIAFAKE: 'fake/secret+key' } });
});
afterAll(() => fake.close());

async function call(key: string, stream: boolean, now?: Date) {
  const k = parseAwsKey(key);
  const url = bedrockUrl(fake.url, k.region, 'claude-3-5-sonnet-20241022', stream);
  const body = JSON.stringify(
    toBedrockBody({ model: 'x', stream, max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }),
  );
  const headers = await signBedrock(k, url, body, {}, now);
  delete headers.host;
  return fetch(url, { method: 'POST', headers, body });
}

describe('Bedrock signing and framing against the fake', () => {
  it('a SigV4-signed invoke is accepted and answers a Claude message', async () => {
    const res = await call('AKIAFAKE|fake/secret+key|us-west-2', false);
    expect(res.status).toBe(200);
    const j = (await res.json()) as { content: { text: string }[]; usage: { input_tokens: number } };
    expect(j.content[0]?.text).toBe('Hello from Bedrock');
    expect(j.usage.input_tokens).toBe(12);
    expect(fake.requests.at(-1)?.path).toBe('/model/anthropic.claude-3-5-sonnet-20241022-v2%3A0/invoke');
    expect(fake.requests.at(-1)?.body.anthropic_version).toBe('bedrock-2023-05-31');
  });

  it('the stream decodes into Claude SSE events', async () => {
    const res = await call('AKIAFAKE|fake/secret+key|us-west-2', true);
    expect(res.headers.get('content-type')).toBe('application/vnd.amazon.eventstream');
    const p = bedrockStreamParser();
    const events = [];
    for await (const c of res.body as unknown as AsyncIterable<Uint8Array>) events.push(...p.push(c));
    p.end();
    expect(events.map((e) => e.event)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    const text = events
      .filter((e) => e.event === 'content_block_delta')
      .map((e) => JSON.parse(e.data).delta.text)
      .join('');
    expect(text).toBe('Hello from Bedrock');
  });

  it('a wrong secret, an unknown key, a wrong region and a stale date are refused as AWS does', async () => {
    const bad = await call('AKIAFAKE|wrong|us-west-2', false);
    expect(bad.status).toBe(403);
    expect(bad.headers.get('x-amzn-errortype')).toMatch(/^InvalidSignatureException/);
    expect(((await bad.json()) as { message: string }).message).toMatch(/signature we calculated does not match/);
    const unknown = await call('AKIAOTHER|fake/secret+key|us-west-2', false);
    expect(unknown.status).toBe(403);
    expect(((await unknown.json()) as { message: string }).message).toBe(
      'The security token included in the request is invalid.',
    );
    expect((await call('AKIAFAKE|fake/secret+key|eu-west-1', false)).status).toBe(403);
    const stale = await call('AKIAFAKE|fake/secret+key|us-west-2', false, new Date(Date.now() - 10 * 60_000));
    expect(stale.status).toBe(403);
    expect(fake.requests.at(-1)?.signatureError).toBe('expired');
  });

  it('an exception message in the stream throws with its status', async () => {
    fake.set({ streamException: 'throttlingException', message: 'Too many requests, please wait.' });
    try {
      const res = await call('AKIAFAKE|fake/secret+key|us-west-2', true);
      const p = bedrockStreamParser();
      const bytes = Buffer.from(await res.arrayBuffer());
      expect(() => p.push(bytes)).toThrow('Too many requests, please wait.');
    } finally {
      fake.set({ streamException: undefined });
    }
  });

  it('a key without three parts is refused with the spec hint', () => {
    expect(() => parseAwsKey('onlyone')).toThrow('Ak|Sk|Region');
  });
});
