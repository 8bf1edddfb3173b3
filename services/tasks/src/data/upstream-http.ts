/**
 * HTTP to task upstreams: JSON in and out, a timeout on every call, the channel key in
 * `mj-api-secret` for midjourney-proxy (types 2 and 5) and as a bearer token otherwise (Suno).
 */
import type { ChannelRef, UpstreamAnswer, UpstreamPort } from '../domain/ports.ts';

export function upstreamHttp(timeoutMs: number): UpstreamPort & { image(url: string): Promise<Response> } {
  const raw = (channel: ChannelRef, path: string, init: RequestInit = {}): Promise<Response> => {
    const base = (channel.baseUrl || '').replace(/\/+$/, '');
    return fetch(`${base}${path}`, {
      ...init,
      headers: {
        'content-type': 'application/json',
        ...(channel.type === 2 || channel.type === 5
          ? { 'mj-api-secret': channel.key }
          : { authorization: `Bearer ${channel.key}` }),
      },
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
    get: (channel, path) => call(channel, path, { method: 'GET' }),
    raw: (channel, path) => raw(channel, path),
    image: (url) => fetch(url, { signal: AbortSignal.timeout(timeoutMs) }),
  };
}
