import type { IncomingMessage, ServerResponse } from 'node:http';
import { CancelSource, type ClientSink } from '../../domain/exchange/ports.ts';
import { relayMetrics } from './metrics.ts';

const metrics = relayMetrics();
const streamClosed = () => metrics.streamClosed();

/**
 * A ClientSink over a node:http response. It is aborted when the client goes away before the
 * answer ended (the pipeline cancels the upstream call then). A class: one object per request,
 * its methods shared.
 */
class NodeSink extends CancelSource implements ClientSink {
  started = false;
  private holding = false;
  private tail: { chunk: string | Buffer | undefined } | undefined;
  private status = 200;
  private headers: Record<string, string> | undefined;

  constructor(
    private readonly res: ServerResponse,
    private readonly extra: Record<string, string>,
  ) {
    super();
    res.once('close', () => {
      if (!res.writableFinished) this.abort();
    });
  }

  head(status: number, headers: Record<string, string>): void {
    this.status = status;
    this.headers = headers;
  }

  /** The response head as a flat [name, value, ...] list (no merged header objects). */
  private flatHeaders(contentLength?: number): string[] {
    const out: string[] = [];
    for (const k in this.extra) out.push(k, this.extra[k] as string);
    if (this.headers) for (const k in this.headers) out.push(k, this.headers[k] as string);
    if (contentLength !== undefined) out.push('content-length', String(contentLength));
    return out;
  }

  private start(): void {
    if (this.started) return;
    this.started = true;
    this.res.writeHead(this.status, this.flatHeaders());
    // A streamed answer stays open (relay_open_streams) until its response closes.
    const type = this.headers?.['content-type'];
    if (type !== undefined && (type.startsWith('text/event-stream') || type.includes('ndjson'))) {
      metrics.streamOpened();
      this.res.once('close', streamClosed);
    }
  }

  write(chunk: string | Buffer): boolean {
    this.start();
    return this.res.write(chunk);
  }

  drain(): Promise<void> {
    const res = this.res;
    return new Promise<void>((resolve) => {
      if (res.destroyed) return resolve();
      const done = () => {
        res.off('drain', done);
        res.off('close', done);
        resolve();
      };
      res.once('drain', done);
      res.once('close', done);
    });
  }

  holdEnd(): void {
    this.holding = true;
  }

  releaseEnd(): void {
    this.holding = false;
    const tail = this.tail;
    if (!tail) return;
    this.tail = undefined;
    this.end(tail.chunk);
  }

  end(chunk?: string | Buffer): void {
    if (this.holding) {
      this.tail = { chunk };
      return;
    }
    if (!this.started && chunk !== undefined && !this.res.headersSent) {
      this.started = true;
      this.res.writeHead(this.status, this.flatHeaders(Buffer.byteLength(chunk)));
      this.res.end(chunk);
      return;
    }
    this.start();
    this.res.end(chunk);
  }
}

export function nodeSink(res: ServerResponse, extraHeaders: Record<string, string>): ClientSink {
  return new NodeSink(res, extraHeaders);
}

/** Reads a request body up to `limit` bytes (413 beyond). */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        // Stop keeping it, let the rest drain, and answer 413: destroying the socket here would
        // leave the client with a reset instead of the answer.
        req.removeAllListeners('data');
        req.resume();
        reject(Object.assign(new Error('request body too large'), { status: 413 }));
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
