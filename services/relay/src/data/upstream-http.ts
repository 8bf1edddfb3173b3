/**
 * The upstream HTTP client: undici with keep-alive connection pools per origin. Bodies are
 * streams read by the caller, so SSE passes through as it arrives.
 */
import { Agent, request, FormData as UndiciFormData } from 'undici';
import type { UpstreamClient, UpstreamResponse } from '../domain/exchange/ports.ts';

export interface UpstreamHttpOptions {
  /** Time to wait for the response headers (and between body chunks). */
  timeoutMs: number;
  /** Connections kept per upstream origin. */
  connections?: number;
}

export function createUpstreamHttp(opts: UpstreamHttpOptions): UpstreamClient & { close(): Promise<void> } {
  const agent = new Agent({
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 120_000,
    connections: opts.connections ?? null,
    pipelining: 1,
    headersTimeout: opts.timeoutMs,
    bodyTimeout: opts.timeoutMs,
  });
  return {
    async send(req): Promise<UpstreamResponse> {
      const res = await request(req.url, {
        method: req.method,
        headers: req.headers,
        body: req.body instanceof FormData ? toUndiciForm(req.body) : req.body,
        signal: req.signal,
        dispatcher: agent,
      });
      return {
        status: res.statusCode,
        headers: res.headers as Record<string, string | string[] | undefined>,
        body: res.body,
        bytes: async () => Buffer.from(await res.body.arrayBuffer()),
        dump: () => res.body.dump(),
      };
    },
    close: () => agent.close(),
  };
}

/** Node's global FormData comes from its bundled undici, which this undici cannot serialize. */
function toUndiciForm(form: FormData): UndiciFormData {
  const out = new UndiciFormData();
  for (const [k, v] of form.entries()) {
    if (typeof v === 'string') out.append(k, v);
    else out.append(k, v as unknown as Blob, (v as File).name);
  }
  return out;
}
