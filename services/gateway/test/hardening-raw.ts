/**
 * Raw HTTP for the hardening tests: node:http sends the path, headers and body bytes exactly as
 * given (fetch would normalise a malformed URL or refuse a malformed header), and the answer is
 * read whole. A connection the server drops answers status 0.
 */
import { request } from 'node:http';

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json(): unknown;
}

export interface RawRequest {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Local address to send from (e.g. 127.0.0.2, a loopback peer that is not a trusted proxy). */
  from?: string;
}

/** Sends one request to `base` (http://host:port) and resolves with the whole answer. */
export function raw(base: string, r: RawRequest): Promise<RawAnswer> {
  const url = new URL(base);
  return new Promise((resolve) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method: r.method ?? 'GET',
        path: r.path,
        ...(r.from ? { localAddress: r.from } : {}),
        headers: {
          ...(r.body !== undefined ? { 'content-length': String(Buffer.byteLength(r.body)) } : {}),
          ...r.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', () => undefined);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text,
            json: () => JSON.parse(text) as unknown,
          });
        });
      },
    );
    req.on('error', () => resolve({ status: 0, headers: {}, text: '', json: () => undefined }));
    if (r.body !== undefined) req.write(r.body);
    req.end();
  });
}
