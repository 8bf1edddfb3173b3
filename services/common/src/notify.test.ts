import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fillValues, sendBark, sendGotify, sendWebhook } from './notify.ts';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}
const seen: Seen[] = [];
const server = createServer((req, res) => {
  let body = '';
  req.on('data', (c) => {
    body += c;
  });
  req.on('end', () => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
    res.writeHead(req.url?.startsWith('/fail') ? 500 : 200).end('{}');
  });
});
let base = '';
beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const n = {
  type: 'quota_exceed',
  title: '您的额度即将用尽',
  content: '{{value}}，剩余额度：{{value}}',
  values: ['提醒', '$0.5'],
};
const local = { allowPrivate: true };

describe('notifications in the providers formats', () => {
  it('when a webhook has a secret, then the JSON body is signed with HMAC-SHA256 in X-Webhook-Signature', async () => {
    await sendWebhook(`${base}/hook`, 's3cret', n, local);
    const got = seen.at(-1) as Seen;
    expect(got.method).toBe('POST');
    expect(got.headers['x-webhook-signature']).toBe(createHmac('sha256', 's3cret').update(got.body).digest('hex'));
    expect(JSON.parse(got.body)).toMatchObject({
      type: 'quota_exceed',
      title: '您的额度即将用尽',
      content: '提醒，剩余额度：$0.5',
      values: ['提醒', '$0.5'],
    });
    expect(Math.abs(JSON.parse(got.body).timestamp - Date.now() / 1000)).toBeLessThan(60);
  });

  it('when Bark and Gotify are used, then Bark gets a GET with title and content in the URL and Gotify a message JSON', async () => {
    await sendBark(`${base}/bark/KEY/{{title}}/{{content}}?group=aigw`, n, local);
    const bark = seen.at(-1) as Seen;
    expect(bark.method).toBe('GET');
    expect(bark.url).toBe(
      `/bark/KEY/${encodeURIComponent(n.title)}/${encodeURIComponent('提醒，剩余额度：$0.5')}?group=aigw`,
    );
    await sendGotify(`${base}/gotify/`, 'tok en', 12, n, local);
    const gotify = seen.at(-1) as Seen;
    expect(gotify.url).toBe('/gotify/message?token=tok%20en');
    expect(JSON.parse(gotify.body)).toEqual({ title: n.title, message: '提醒，剩余额度：$0.5', priority: 5 });
  });

  it('when the address is not public and private ones are not allowed, or the receiver fails, then the send is refused', async () => {
    const before = seen.length;
    await expect(sendWebhook(`${base}/hook`, '', n)).rejects.toThrow('not a public address');
    await expect(sendWebhook(`http://localhost:${new URL(base).port}/hook`, '', n)).rejects.toThrow(
      'not a public address',
    );
    expect(seen.length).toBe(before);
    await expect(sendWebhook(`${base}/fail`, '', n, local)).rejects.toThrow('answered 500');
    expect(fillValues('{{value}} {{value}} {{value}}', ['a'])).toBe('a {{value}} {{value}}');
  });
});
