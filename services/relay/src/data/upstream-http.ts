/**
 * The upstream HTTP client: undici keep-alive pools per origin, driven through its dispatch
 * handler API rather than `request()`. That skips a Readable stream, an AbortSignal listener and
 * a parsed header object per call (about a fifth of the relay's CPU per request went there), and
 * it still streams: body chunks reach the caller as they arrive, and a slow reader pauses the
 * socket (backpressure) instead of buffering without bound.
 */
import { Agent, type Dispatcher, ProxyAgent, FormData as UndiciFormData } from 'undici';
import type { Cancellation, UpstreamClient, UpstreamRequest, UpstreamResponse } from '../domain/exchange/ports.ts';

export interface UpstreamHttpOptions {
  /** Time to wait for the response headers (and between body chunks). */
  timeoutMs: number;
  /** Connections kept per upstream origin. */
  connections?: number;
}

/** Buffered body bytes above which a streamed response pauses its socket until read. */
const HIGH_WATER = 64 * 1024;

export function createUpstreamHttp(opts: UpstreamHttpOptions): UpstreamClient & { close(): Promise<void> } {
  const settings = {
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 120_000,
    connections: opts.connections ?? null,
    pipelining: 1,
    headersTimeout: opts.timeoutMs,
    bodyTimeout: opts.timeoutMs,
  };
  const agent = new Agent(settings);
  // Channels with a proxy (setting.proxy): one pooled agent per proxy URL.
  const proxies = new Map<string, ProxyAgent>();
  const via = (proxy: string | undefined): Dispatcher => {
    if (!proxy) return agent;
    let p = proxies.get(proxy);
    if (!p) {
      p = new ProxyAgent({ ...settings, uri: proxy });
      proxies.set(proxy, p);
    }
    return p;
  };
  return {
    send: (req) =>
      new Promise<UpstreamResponse>((resolve, reject) => {
        new UpstreamCall(via(req.proxy), req, resolve, reject);
      }),
    close: async () => {
      await Promise.all([agent.close(), ...[...proxies.values()].map((p) => p.close())]);
    },
  };
}

class AbortedError extends Error {
  constructor() {
    super('Request aborted');
    this.name = 'AbortError';
  }
}

/** One call: the dispatch handler and the response it resolves with. */
class UpstreamCall implements Dispatcher.DispatchHandler {
  private resolveHead: ((r: UpstreamResponse) => void) | undefined;
  private rejectHead: ((err: Error) => void) | undefined;
  private headed = false;
  private abortFn: ((err: Error) => void) | undefined;
  private aborted = false;
  private unsubscribe: (() => void) | undefined;
  private resume: (() => void) | undefined;
  private paused = false;
  /** Body chunks not read yet. */
  private chunks: Buffer[] = [];
  private size = 0;
  private done = false;
  private error: Error | undefined;
  /** The reader waiting for a chunk, the end or an error. */
  private wake: (() => void) | undefined;
  /** bytes() collects the whole body (no pausing). */
  private whole = false;

  constructor(
    agent: Dispatcher,
    req: UpstreamRequest,
    resolve: (r: UpstreamResponse) => void,
    reject: (err: Error) => void,
  ) {
    const cancel: Cancellation | undefined = req.cancel;
    if (cancel?.aborted) {
      reject(new AbortedError());
      return;
    }
    this.resolveHead = resolve;
    this.rejectHead = reject;
    if (cancel) this.unsubscribe = cancel.onAbort(() => this.abort());
    const slash = req.url.indexOf('/', req.url.indexOf('//') + 2);
    const body = req.body instanceof FormData ? toUndiciForm(req.body) : req.body;
    agent.dispatch(
      {
        origin: slash < 0 ? req.url : req.url.slice(0, slash),
        path: slash < 0 ? '/' : req.url.slice(slash),
        method: req.method,
        headers: req.headers,
        body: body ?? null,
      },
      this,
    );
  }

  private abort(): void {
    if (this.aborted || this.done || this.error) return;
    this.aborted = true;
    this.abortFn?.(new AbortedError());
  }

  onConnect(abort: (err?: Error) => void): void {
    this.abortFn = abort;
    if (this.aborted) abort(new AbortedError());
  }

  onHeaders(status: number, rawHeaders: Buffer[], resume: () => void): boolean {
    if (status < 200) return true; // 1xx: the real answer follows
    this.resume = resume;
    this.headed = true;
    const resolve = this.resolveHead;
    this.resolveHead = undefined;
    this.rejectHead = undefined;
    resolve?.({
      status,
      // Parsed now, not on first use: a lazy getter kept undici's raw header buffers (and this
      // call) reachable from the response, and at 500 req/s the relay then promoted about 10 MB
      // per 10 s to the old generation instead of 2 MB, with scavenges twice as long
      // (docs/benchmarks.md). The relay reads content-type of every answer anyway.
      headers: parseHeaders(rawHeaders),
      body: { [Symbol.asyncIterator]: () => this.read() },
      bytes: () => this.bytes(),
    });
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.chunks.push(chunk);
    this.size += chunk.length;
    const w = this.wake;
    if (w) {
      this.wake = undefined;
      w();
    }
    if (!this.whole && this.size > HIGH_WATER) {
      this.paused = true;
      return false;
    }
    return true;
  }

  onComplete(): void {
    this.done = true;
    this.finish();
  }

  onError(err: Error): void {
    this.error = err;
    this.finish();
    if (!this.headed) {
      const reject = this.rejectHead;
      this.resolveHead = undefined;
      this.rejectHead = undefined;
      reject?.(err);
    }
  }

  private finish(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    // undici may keep a finished request (and so this handler) referenced until its connection
    // serves the next one: nothing heavy stays reachable from here.
    this.abortFn = undefined;
    this.resume = undefined;
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  private take(): Buffer {
    const c = this.chunks;
    this.chunks = [];
    this.size = 0;
    if (this.paused) {
      this.paused = false;
      this.resume?.();
    }
    return c.length === 1 ? (c[0] as Buffer) : Buffer.concat(c);
  }

  private async bytes(): Promise<Buffer> {
    this.whole = true;
    if (this.paused) {
      this.paused = false;
      this.resume?.();
    }
    while (!this.done) {
      if (this.error) throw this.error;
      await new Promise<void>((r) => {
        this.wake = r;
      });
    }
    return this.chunks.length === 0 ? Buffer.alloc(0) : this.take();
  }

  private async *read(): AsyncGenerator<Buffer> {
    try {
      for (;;) {
        if (this.chunks.length > 0) {
          yield this.take();
          continue;
        }
        if (this.error) throw this.error;
        if (this.done) return;
        await new Promise<void>((r) => {
          this.wake = r;
        });
      }
    } finally {
      // A reader that stops early (break, throw) releases the connection.
      if (!this.done) this.abort();
    }
  }
}

function parseHeaders(raw: Buffer[]): Record<string, string | string[] | undefined> {
  const out: Record<string, string | string[] | undefined> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const k = (raw[i] as Buffer).toString('latin1').toLowerCase();
    const v = (raw[i + 1] as Buffer).toString('latin1');
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
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
