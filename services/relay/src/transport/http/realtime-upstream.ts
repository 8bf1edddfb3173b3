/** The upstream side of a Realtime session: opening the channel's socket. */
import WebSocket from 'ws';
import type { RoutedChannel } from '../../domain/channel-index.ts';
import { UpstreamFailure, upstreamMessage } from '../../domain/exchange/failure.ts';
import { realtimeTarget } from '../../domain/realtime.ts';

/** An open upstream socket and the events it sent before the client's socket was ready. */
export interface Upstream {
  ws: WebSocket;
  early: { data: Buffer; binary: boolean }[];
  /** Stops keeping events aside (the bridge takes over). */
  release(): void;
}

export interface UpstreamSocketOptions {
  /** Time allowed to open the upstream socket. */
  connectTimeoutMs: number;
  /** Largest upstream message. */
  maxMessageBytes: number;
}

/** Opens the upstream socket; an UpstreamFailure when it cannot (status 0 for no connection). */
export function connectUpstream(
  ch: RoutedChannel,
  model: string,
  beta: string | undefined,
  opts: UpstreamSocketOptions,
): Promise<Upstream> {
  const target = realtimeTarget(ch.target, model, beta);
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(target.url, {
      headers: target.headers,
      handshakeTimeout: opts.connectTimeoutMs,
      maxPayload: opts.maxMessageBytes,
      perMessageDeflate: false,
    });
    // The upstream speaks first (session.created) while the client's upgrade is still under way.
    const early: { data: Buffer; binary: boolean }[] = [];
    const keep = (data: Buffer, binary: boolean) => early.push({ data, binary });
    ws.on('message', keep);
    ws.once('open', () => resolve({ ws, early, release: () => ws.off('message', keep) }));
    ws.once('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const status = res.statusCode ?? 502;
        reject(new UpstreamFailure(status, upstreamMessage(Buffer.concat(chunks).toString('utf8'), status)));
      });
      res.on('error', () => reject(new UpstreamFailure(res.statusCode ?? 0, 'upstream closed the handshake')));
    });
    ws.once('error', (err) => reject(new UpstreamFailure(0, `上游连接失败: ${err.message}`, 'connection')));
  });
}
