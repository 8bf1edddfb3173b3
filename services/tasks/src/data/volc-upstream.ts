/**
 * HTTP to VolcEngine's visual API (Jimeng, channel type 51): `POST {base}/?Action=...&Version=...`
 * with a JSON body, signed with VolcEngine's HMAC-SHA256 request signature (service "cv", region
 * "cn-north-1") from the channel key `AccessKey|SecretKey`. The signature covers the method, path,
 * sorted query, the host, content-type, X-Date and X-Content-Sha256 headers and the body's hash.
 */
import { createHash, createHmac } from 'node:crypto';
import type { ChannelRef, UpstreamAnswer } from '../domain/ports.ts';

export const VOLC_SERVICE = 'cv';
export const VOLC_REGION = 'cn-north-1';
export const VOLC_VISUAL_VERSION = '2022-08-31';

const hmac = (key: Buffer | string, text: string) => createHmac('sha256', key).update(text, 'utf8').digest();
const sha256Hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
/** RFC 3986 encoding (encodeURIComponent leaves !'()* alone). */
const rfc3986 = (s: string) =>
  encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** `20260102T030405Z` of a time. */
export const volcDate = (d: Date) =>
  d
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');

/**
 * The headers of a signed request: Host is the caller's (fetch sends the URL's host), the others
 * are to be sent as returned.
 */
export function volcSign(input: {
  accessKey: string;
  secretKey: string;
  method: string;
  host: string;
  path: string;
  query: Record<string, string>;
  body: string;
  contentType: string;
  now?: Date;
}): Record<string, string> {
  const xDate = volcDate(input.now ?? new Date());
  const day = xDate.slice(0, 8);
  const bodyHash = sha256Hex(input.body);
  const query = Object.keys(input.query)
    .sort()
    .map((k) => `${rfc3986(k)}=${rfc3986(input.query[k] ?? '')}`)
    .join('&');
  const signed: [string, string][] = [
    ['content-type', input.contentType],
    ['host', input.host],
    ['x-content-sha256', bodyHash],
    ['x-date', xDate],
  ];
  const canonical = [
    input.method.toUpperCase(),
    input.path || '/',
    query,
    signed.map(([k, v]) => `${k}:${v.trim()}\n`).join(''),
    signed.map(([k]) => k).join(';'),
    bodyHash,
  ].join('\n');
  const scope = `${day}/${VOLC_REGION}/${VOLC_SERVICE}/request`;
  const toSign = ['HMAC-SHA256', xDate, scope, sha256Hex(canonical)].join('\n');
  let key = hmac(input.secretKey, day);
  for (const part of [VOLC_REGION, VOLC_SERVICE, 'request']) key = hmac(key, part);
  const signature = createHmac('sha256', key).update(toSign, 'utf8').digest('hex');
  return {
    'content-type': input.contentType,
    'x-date': xDate,
    'x-content-sha256': bodyHash,
    authorization: `HMAC-SHA256 Credential=${input.accessKey}/${scope}, SignedHeaders=${signed.map(([k]) => k).join(';')}, Signature=${signature}`,
  };
}

export interface VolcUpstream {
  /** Calls an Action of the visual API with a JSON body; the answer's status and parsed JSON. */
  call(channel: ChannelRef, action: string, body: unknown): Promise<UpstreamAnswer>;
}

export function volcUpstream(timeoutMs: number): VolcUpstream {
  return {
    async call(channel, action, body) {
      const base = new URL(`${(channel.baseUrl || '').replace(/\/+$/, '')}/`);
      const query = { Action: action, Version: VOLC_VISUAL_VERSION };
      const [accessKey = '', secretKey = ''] = channel.key.split('|').map((p) => p.trim());
      const text = JSON.stringify(body);
      const headers = volcSign({
        accessKey,
        secretKey,
        method: 'POST',
        host: base.host,
        path: base.pathname,
        query,
        body: text,
        contentType: 'application/json',
      });
      const url = `${base.origin}${base.pathname}?${new URLSearchParams(query).toString()}`;
      const res = await fetch(url, {
        method: 'POST',
        headers: { ...headers, accept: 'application/json' },
        body: text,
        signal: AbortSignal.timeout(timeoutMs),
      });
      const raw = await res.text();
      let parsed: unknown;
      try {
        parsed = raw ? JSON.parse(raw) : undefined;
      } catch {
        parsed = undefined;
      }
      return { status: res.status, body: parsed };
    },
  };
}
