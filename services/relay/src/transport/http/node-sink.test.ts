/** The client sink over a real node:http response: its end can be held until the usage is recorded. */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { nodeSink } from './node-sink.ts';

let server: Server | undefined;
afterEach(() => new Promise<void>((r) => (server ? server.close(() => r()) : r())));

/** A server whose one request is handed to `handle`; resolves with the URL. */
function serve(handle: (res: ServerResponse) => void): Promise<string> {
  server = createServer((_req, res) => handle(res));
  return new Promise((r) =>
    server?.listen(0, '127.0.0.1', () => r(`http://127.0.0.1:${(server?.address() as AddressInfo).port}/`)),
  );
}

describe('node sink', () => {
  it('when the end is held, then the last chunk waits (the response stays open) until it is released', async () => {
    const seen: { endedWhileHeld?: boolean; endedAfter?: boolean } = {};
    const url = await serve((res) => {
      const sink = nodeSink(res, {});
      sink.holdEnd?.();
      sink.head(200, { 'content-type': 'text/event-stream' });
      sink.write('data: 1\n\n');
      sink.end('data: [DONE]\n\n');
      seen.endedWhileHeld = res.writableEnded;
      // The pipeline records the usage event here, then releases.
      sink.releaseEnd?.();
      seen.endedAfter = res.writableEnded;
    });
    const body = await (await fetch(url)).text();
    expect(seen).toEqual({ endedWhileHeld: false, endedAfter: true });
    expect(body).toBe('data: 1\n\ndata: [DONE]\n\n');
  });

  it('when a whole answer is held, then nothing is sent until the release, which sends it with its length', async () => {
    const seen: { sentWhileHeld?: boolean } = {};
    const url = await serve((res) => {
      const sink = nodeSink(res, {});
      sink.holdEnd?.();
      sink.head(200, { 'content-type': 'application/json' });
      sink.end('{"ok":true}');
      seen.sentWhileHeld = res.headersSent;
      sink.releaseEnd?.();
    });
    const res = await fetch(url);
    expect(seen.sentWhileHeld).toBe(false);
    expect(res.headers.get('content-length')).toBe('11');
    expect(await res.json()).toEqual({ ok: true });
  });
});
