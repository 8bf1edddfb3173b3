/** What the relay's domain needs from HTTP, in both directions (implemented in transport/ and data/). */

/**
 * A cancellation source without an AbortController per request (those cost more than the rest
 * of a request's bookkeeping on the hot path).
 */
export interface Cancellation {
  readonly aborted: boolean;
  /** Calls `fn` once when cancelled; returns the unsubscribe. */
  onAbort(fn: () => void): () => void;
}

/** An upstream answer whose body has not been read yet (read it one way: iterate or bytes()). */
export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: AsyncIterable<Uint8Array>;
  bytes(): Promise<Buffer>;
}

export interface UpstreamRequest {
  url: string;
  method: 'POST' | 'GET' | 'DELETE';
  headers: Record<string, string>;
  body?: string | Buffer | FormData;
  /** Cancels the call (before or after the response started). */
  cancel?: Cancellation;
  /** The channel's proxy (setting.proxy): an http(s) proxy URL the call goes through. */
  proxy?: string;
}

/** Sends upstream calls; rejects on connection failures (not on HTTP error statuses). */
export interface UpstreamClient {
  send(req: UpstreamRequest): Promise<UpstreamResponse>;
}

/** The client side of a relayed request: the answer is written here, chunk by chunk. */
export interface ClientOutput {
  /** Sets the status and headers; the first write sends them. */
  head(status: number, headers: Record<string, string>): void;
  /** Writes a chunk; false when the socket buffer is full (await drain()). */
  write(chunk: string | Buffer): boolean;
  drain(): Promise<void>;
  end(chunk?: string | Buffer): void;
  /** Whether anything was sent (then the status can no longer change). */
  readonly started: boolean;
  /**
   * From holdEnd() until releaseEnd(), end() keeps its last chunk instead of sending it: the
   * pipeline records the request's usage event (on disk with the spool) before the client can see
   * its answer complete, so a kill between the two never leaves an answer nobody is charged for.
   */
  holdEnd?(): void;
  releaseEnd?(): void;
}

/** Where a relayed answer goes; aborted when the client goes away before the answer ends. */
export type ClientSink = ClientOutput & Cancellation;

/** The client formats the relay serves (the protocols with a client side, protocols/registry.ts). */
export type { ClientFormat } from '../protocols/registry.ts';

/**
 * A Cancellation to trigger by hand (first-token timeouts, the client sink, tests). A class:
 * its methods are shared, so one per request costs one small object.
 */
export class CancelSource implements Cancellation {
  aborted = false;
  private listeners: (() => void)[] | undefined;

  onAbort(fn: () => void): () => void {
    if (this.aborted) {
      fn();
      return noop;
    }
    this.listeners ??= [];
    this.listeners.push(fn);
    return () => {
      const i = this.listeners?.indexOf(fn) ?? -1;
      if (i >= 0) this.listeners?.splice(i, 1);
    };
  }

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    const fns = this.listeners ?? [];
    this.listeners = undefined;
    for (const fn of fns) fn();
  }
}

const noop = () => undefined;

export function cancelSource(): CancelSource {
  return new CancelSource();
}
