/**
 * Notifications to addresses a user or an admin chose, in new-api's formats: a webhook (JSON
 * `{type, title, content, values, timestamp}`, signed in `X-Webhook-Signature` with the hex
 * HMAC-SHA256 of the body under the secret), Bark (a GET of the user's URL with `{{title}}` and
 * `{{content}}` filled in) and Gotify (POST `<server>/message?token=...` with `{title, message,
 * priority}`). The URLs are someone else's: unless `allowPrivate`, an address that is not public is
 * refused, as a literal or as resolved in the connection's own lookup (public-address.ts).
 */
import { createHmac } from 'node:crypto';
import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { isPublicAddress, PrivateAddressError, publicOnlyLookup } from './public-address.ts';

/** A notification: new-api's type (quota_exceed, channel_update, ...), a title, and a text whose
 * `{{value}}` placeholders take `values` in order. */
export interface Notification {
  type: string;
  title: string;
  content: string;
  values: string[];
}

export interface SendOptions {
  /** Let loopback and private addresses through (a local or single-tenant setup, tests). */
  allowPrivate?: boolean;
  timeoutMs?: number;
}

/** The content with its `{{value}}` placeholders filled in order. */
export function fillValues(content: string, values: string[]): string {
  let i = 0;
  return content.replace(/\{\{value\}\}/g, (m) => (i < values.length ? String(values[i++]) : m));
}

/** The webhook signature: hex HMAC-SHA256 of the raw body under the secret (new-api's). */
export const webhookSignature = (secret: string, body: string) =>
  createHmac('sha256', secret).update(body).digest('hex');

/** Whether a text is an http(s) URL. */
export function isHttpUrl(raw: string): boolean {
  try {
    const u = new URL(raw);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

function send(
  raw: string,
  init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string },
  opts: SendOptions,
): Promise<void> {
  return new Promise((resolve, reject) => {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return reject(new Error('invalid notification URL'));
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return reject(new Error('not an http(s) URL'));
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (!opts.allowPrivate && isIP(host) && !isPublicAddress(host)) return reject(new PrivateAddressError(host, host));
    const timeoutMs = opts.timeoutMs ?? 10_000;
    const headers = { ...init.headers };
    if (init.body !== undefined) headers['content-length'] = String(Buffer.byteLength(init.body));
    const options: RequestOptions = {
      method: init.method,
      headers,
      timeout: timeoutMs,
      ...(opts.allowPrivate ? {} : { lookup: publicOnlyLookup as RequestOptions['lookup'] }),
    };
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, options, (res: IncomingMessage) => {
      res.resume();
      res.on('end', () => {
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) resolve();
        else reject(new Error(`notification answered ${status}`));
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`notification timed out after ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(init.body);
  });
}

/** POSTs new-api's webhook payload; signed when a secret is given. */
export function sendWebhook(url: string, secret: string, n: Notification, opts: SendOptions = {}): Promise<void> {
  const body = JSON.stringify({
    type: n.type,
    title: n.title,
    content: fillValues(n.content, n.values),
    values: n.values,
    timestamp: Math.floor(Date.now() / 1000),
  });
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (secret) headers['x-webhook-signature'] = webhookSignature(secret, body);
  return send(url, { method: 'POST', headers, body }, opts);
}

/** GETs the Bark URL with `{{title}}` and `{{content}}` replaced (URL-encoded). */
export function sendBark(url: string, n: Notification, opts: SendOptions = {}): Promise<void> {
  const target = url
    .replaceAll('{{title}}', encodeURIComponent(n.title))
    .replaceAll('{{content}}', encodeURIComponent(fillValues(n.content, n.values)));
  return send(target, { method: 'GET', headers: { 'user-agent': 'OneAPI-Bark-Notify/1.0' } }, opts);
}

/** POSTs a Gotify message (priority 0-10, else 5). */
export function sendGotify(
  server: string,
  token: string,
  priority: number,
  n: Notification,
  opts: SendOptions = {},
): Promise<void> {
  const url = `${server.replace(/\/+$/, '')}/message?token=${encodeURIComponent(token)}`;
  const body = JSON.stringify({
    title: n.title,
    message: fillValues(n.content, n.values),
    priority: Number.isInteger(priority) && priority >= 0 && priority <= 10 ? priority : 5,
  });
  const headers = { 'content-type': 'application/json; charset=utf-8', 'user-agent': 'NewAPI-Gotify-Notify/1.0' };
  return send(url, { method: 'POST', headers, body }, opts);
}
