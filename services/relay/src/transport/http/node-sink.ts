import type { IncomingMessage, ServerResponse } from 'node:http';
import { type ClientSink, cancelSource } from '../../domain/exchange/ports.ts';

/**
 * A ClientSink over a node:http response. It is aborted when the client goes away before the
 * answer ended (the pipeline cancels the upstream call then).
 */
export function nodeSink(res: ServerResponse, extraHeaders: Record<string, string>): ClientSink {
  const gone = cancelSource();
  let status = 200;
  let headers: Record<string, string> = {};
  let started = false;
  res.once('close', () => {
    if (!res.writableFinished) gone.abort();
  });
  const start = () => {
    if (started) return;
    started = true;
    res.writeHead(status, { ...extraHeaders, ...headers });
  };
  return {
    get aborted() {
      return gone.aborted;
    },
    onAbort: gone.onAbort,
    get started() {
      return started;
    },
    head(s, h) {
      status = s;
      headers = h;
    },
    write(chunk) {
      start();
      return res.write(chunk);
    },
    drain: () =>
      new Promise<void>((resolve) => {
        if (res.destroyed) return resolve();
        const done = () => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.once('drain', done);
        res.once('close', done);
      }),
    end(chunk) {
      if (!started && chunk !== undefined && !res.headersSent) {
        started = true;
        res.writeHead(status, { ...extraHeaders, ...headers, 'content-length': String(Buffer.byteLength(chunk)) });
        res.end(chunk);
        return;
      }
      start();
      res.end(chunk);
    },
  };
}

/** Reads a request body up to `limit` bytes (413 beyond). */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        reject(Object.assign(new Error('request body too large'), { status: 413 }));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
