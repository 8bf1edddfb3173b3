import {
  createServer,
  type IncomingMessage,
  type OutgoingHttpHeader,
  type OutgoingHttpHeaders,
  type Server,
  ServerResponse,
} from 'node:http';
import { httpMetrics, type Logger, mountHealth } from '@aigw/common';
import express from 'express';

/**
 * The relay's HTTP server: node:http with the relay routes first (no framework on the hot
 * path), everything else (/healthz, 404) through a small Express app. /readyz and /metrics are
 * served on the ops port (METRICS_PORT), not here.
 * `drain()` first keeps serving for a while with every response saying `Connection: close`, then
 * stops accepting connections and waits for in-flight requests (streams included).
 */
const unexpected = { error: { message: '服务器内部错误', type: 'server_error', param: null, code: 'internal_error' } };

export function createRelayServer(opts: { logger: Logger }): {
  server: Server;
  /** Sets the relay routes' dispatcher (true when it took the request). */
  attach(relay: (req: IncomingMessage, res: ServerResponse) => boolean): void;
  inflight(): number;
  track(p: Promise<unknown>): void;
  /**
   * Serves on for `delayMs` with `Connection: close` on every response, then stops listening and
   * waits for in-flight requests until `graceMs` after the call (the delay included).
   */
  drain(opts: { delayMs: number; graceMs: number }): Promise<void>;
} {
  // Set when the drain starts: from then on no response offers its connection for reuse.
  let closing = false;
  /**
   * Responses whose headers are written while draining say `Connection: close` (Node then ends
   * the connection after them), those of requests that arrived before the drain included: a
   * balancer's pooled connection must not be left idle for the relay to close under a request
   * the balancer is sending on it at that moment. Every way of sending headers (writeHead,
   * write, end, flushHeaders) goes through writeHead.
   */
  class Response extends ServerResponse<IncomingMessage> {
    override writeHead(
      statusCode: number,
      reason?: string | OutgoingHttpHeaders | OutgoingHttpHeader[],
      headers?: OutgoingHttpHeaders | OutgoingHttpHeader[],
    ): this {
      if (closing) this.shouldKeepAlive = false;
      // Both overloads in one call: Node tells a status message from headers by their type.
      return super.writeHead(statusCode, reason as string | undefined, headers);
    }
  }
  let relay: ((req: IncomingMessage, res: ServerResponse) => boolean) | undefined;
  const ops = express();
  ops.disable('x-powered-by');
  ops.use(httpMetrics());
  mountHealth(ops);
  ops.use((req, res) => {
    res.status(404).json({
      error: {
        message: `Invalid URL (${req.method} ${req.path})`,
        type: 'invalid_request_error',
        param: null,
        code: null,
      },
    });
  });
  // In-flight requests as a count (a Set of promises with finally() cost two promises each).
  let pending = 0;
  let idle: (() => void) | undefined;
  const settled = () => {
    pending--;
    if (pending === 0 && idle) {
      idle();
      idle = undefined;
    }
  };
  // keepAliveTimeout above the idle timeouts of common balancers (60 s for AWS ALB and nginx's
  // upstream keepalive_timeout): the balancer, not the relay, closes an idle pooled connection.
  const server = createServer({ keepAliveTimeout: 65_000, requestTimeout: 0, ServerResponse: Response }, (req, res) => {
    // A throw here would be outside any handler and end the process: answer 500 instead.
    try {
      if (relay?.(req, res)) return;
      // Express gives its responses its own prototype (bypassing Response.writeHead above): the
      // requests it serves are instant, so deciding when they arrive is enough.
      if (closing) res.shouldKeepAlive = false;
      ops(req, res);
    } catch (err) {
      opts.logger.error({ err, method: req.method }, 'relay request listener failed');
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify(unexpected));
      } else res.destroy();
    }
  });
  return {
    server,
    attach(fn) {
      relay = fn;
    },
    inflight: () => pending,
    track(p) {
      pending++;
      p.then(settled, settled);
    },
    async drain({ delayMs, graceMs }) {
      const deadline = Date.now() + graceMs;
      // Readiness already answers 503, but a balancer learns it only at its next probe: until
      // then it still sends requests here, on new connections and on pooled ones. Closing the
      // listener now would reset the connections still in its accept queue and the idle pooled
      // ones a request is being written to, after the request was sent: a balancer cannot retry
      // such a POST, so the client would see the cut. Keep serving, each answer with
      // Connection: close, for longer than the balancer's probe period.
      closing = true;
      if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
      // The balancers have seen 503 by now and open nothing new here: a connection attempted
      // from now on is refused, which a balancer retries on another backend.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      while (pending > 0 && Date.now() < deadline) {
        await new Promise<void>((r) => {
          idle = r;
          setTimeout(r, 200);
        });
        server.closeIdleConnections();
      }
      server.closeAllConnections();
      await closed;
    },
  };
}
