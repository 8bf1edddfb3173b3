/** What the relay's domain needs from HTTP, in both directions (implemented in transport/ and data/). */

/** An upstream answer whose body has not been read yet. */
export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: AsyncIterable<Uint8Array>;
  bytes(): Promise<Buffer>;
  /** Discards the body (keeps the connection reusable). */
  dump(): Promise<void>;
}

export interface UpstreamRequest {
  url: string;
  method: 'POST' | 'GET';
  headers: Record<string, string>;
  body?: string | Buffer | FormData;
  signal: AbortSignal;
}

/** Sends upstream calls; rejects on connection failures (not on HTTP error statuses). */
export interface UpstreamClient {
  send(req: UpstreamRequest): Promise<UpstreamResponse>;
}

/** The client side of a relayed request: the answer is written here, chunk by chunk. */
export interface ClientSink {
  /** Sets the status and headers; the first write sends them. */
  head(status: number, headers: Record<string, string>): void;
  /** Writes a chunk; false when the socket buffer is full (await drain()). */
  write(chunk: string | Buffer): boolean;
  drain(): Promise<void>;
  end(chunk?: string | Buffer): void;
  /** Whether anything was sent (then the status can no longer change). */
  readonly started: boolean;
  /** Aborted when the client goes away before the answer ends. */
  readonly signal: AbortSignal;
}

/** The client formats the relay serves. */
export type ClientFormat = 'openai' | 'claude' | 'gemini';
