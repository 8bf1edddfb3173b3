import { type ClientSink, cancelSource } from '../../src/domain/exchange/ports.ts';

/** A ClientSink that keeps what was written (adaptor tests without an HTTP server). */
export function memorySink(): ClientSink & {
  status: number;
  headers: Record<string, string>;
  text(): string;
  ended: boolean;
  abort(): void;
  writes: number;
} {
  const gone = cancelSource();
  const parts: string[] = [];
  const sink = {
    status: 0,
    headers: {} as Record<string, string>,
    ended: false,
    writes: 0,
    started: false,
    get aborted() {
      return gone.aborted;
    },
    onAbort: gone.onAbort,
    head(status: number, headers: Record<string, string>) {
      sink.status = status;
      sink.headers = headers;
    },
    write(chunk: string | Buffer) {
      sink.started = true;
      sink.writes++;
      parts.push(chunk.toString());
      return true;
    },
    drain: async () => undefined,
    end(chunk?: string | Buffer) {
      sink.started = true;
      if (chunk) parts.push(chunk.toString());
      sink.ended = true;
    },
    text: () => parts.join(''),
    abort: () => gone.abort(),
  };
  return sink;
}
