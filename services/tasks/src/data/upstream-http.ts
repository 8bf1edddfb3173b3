/**
 * HTTP to task upstreams: JSON in and out (multipart out for a video's reference image), a timeout on every call, the channel key in
 * `mj-api-secret` for midjourney-proxy (types 2 and 5), a JWT signed with the key for Kling
 * (type 50), `Token {key}` for Vidu (type 52) and as a bearer token otherwise (Suno, OpenAI videos,
 * Doubao video).
 */
import { createHmac } from 'node:crypto';
import type { ChannelRef, UpstreamAnswer, UpstreamPort } from '../domain/ports.ts';

const b64url = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

/**
 * Kling's API token: a JWT (HS256) whose issuer is the access key, signed with the secret key,
 * valid 30 minutes (from 5 s ago, for clock skew).
 */
export function klingJwt(accessKey: string, secretKey: string, nowSec = Math.floor(Date.now() / 1000)): string {
  const head = `${b64url({ alg: 'HS256', typ: 'JWT' })}.${b64url({ iss: accessKey, exp: nowSec + 1800, nbf: nowSec - 5 })}`;
  return `${head}.${createHmac('sha256', secretKey).update(head).digest('base64url')}`;
}

/** A Kling channel key `AccessKey|SecretKey` as a bearer JWT, made again when it nears expiry. */
const klingTokens = new Map<string, { jwt: string; until: number }>();
function klingBearer(key: string): string {
  const now = Math.floor(Date.now() / 1000);
  const hit = klingTokens.get(key);
  if (hit && hit.until > now) return hit.jwt;
  const [ak = '', sk = ''] = key.split('|').map((p) => p.trim());
  const jwt = klingJwt(ak, sk, now);
  if (klingTokens.size > 1_000) klingTokens.clear();
  klingTokens.set(key, { jwt, until: now + 1500 });
  return jwt;
}

function authHeaders(channel: ChannelRef): Record<string, string> {
  if (channel.type === 2 || channel.type === 5) return { 'mj-api-secret': channel.key };
  if (channel.type === 50) return { authorization: `Bearer ${klingBearer(channel.key)}` };
  // Vidu's API token scheme.
  if (channel.type === 52) return { authorization: `Token ${channel.key}` };
  return { authorization: `Bearer ${channel.key}` };
}

export function upstreamHttp(timeoutMs: number): UpstreamPort & { image(url: string): Promise<Response> } {
  const raw = (channel: ChannelRef, path: string, init: RequestInit = {}): Promise<Response> => {
    const base = (channel.baseUrl || '').replace(/\/+$/, '');
    return fetch(`${base}${path}`, {
      ...init,
      // A FormData body sets its own multipart content type (with the boundary).
      headers:
        init.body instanceof FormData
          ? authHeaders(channel)
          : { 'content-type': 'application/json', ...authHeaders(channel) },
      signal: AbortSignal.timeout(timeoutMs),
    });
  };
  const call = async (channel: ChannelRef, path: string, init: RequestInit): Promise<UpstreamAnswer> => {
    const res = await raw(channel, path, init);
    const text = await res.text();
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    return { status: res.status, body };
  };
  return {
    post: (channel, path, body) => call(channel, path, { method: 'POST', body: JSON.stringify(body) }),
    postForm: (channel, path, form) => call(channel, path, { method: 'POST', body: form }),
    get: (channel, path) => call(channel, path, { method: 'GET' }),
    del: (channel, path) => call(channel, path, { method: 'DELETE' }),
    raw: (channel, path) => raw(channel, path),
    image: (url) => fetch(url, { signal: AbortSignal.timeout(timeoutMs) }),
  };
}
