/**
 * A TCP proxy on loopback that can stall: while stalled it stops forwarding in both directions
 * (connections stay open, bytes wait in its buffers and the kernel's, new connections are accepted
 * and not forwarded), like a network path that silently drops to zero; resume() lets everything
 * through again. The fault suite puts it between the relay and billing.
 */
import { connect, createServer, type Socket } from 'node:net';

export interface StallProxy {
  port: number;
  stall(): void;
  resume(): void;
  close(): Promise<void>;
}

/** `port` may be a function: the target's port looked up at each new connection. */
export async function startStallProxy(target: { host?: string; port: number | (() => number) }): Promise<StallProxy> {
  let stalled = false;
  /** Per direction: the socket written to and what waits for it while stalled. */
  const links = new Set<{ to: Socket; held: Buffer[] }>();
  const sockets = new Set<Socket>();
  const forward = (from: Socket, to: Socket) => {
    const link = { to, held: [] as Buffer[] };
    links.add(link);
    from.on('data', (chunk: Buffer) => {
      if (stalled || link.held.length > 0) link.held.push(chunk);
      else to.write(chunk);
    });
    from.on('end', () => {
      if (!stalled) to.end();
    });
    from.on('close', () => links.delete(link));
  };
  const server = createServer((client) => {
    const upstream = connect({
      host: target.host ?? '127.0.0.1',
      port: typeof target.port === 'function' ? target.port() : target.port,
    });
    sockets.add(client);
    sockets.add(upstream);
    forward(client, upstream);
    forward(upstream, client);
    const close = () => {
      sockets.delete(client);
      sockets.delete(upstream);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close);
    upstream.on('error', close);
    client.on('close', close);
    upstream.on('close', close);
  });
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', () => res()));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    stall() {
      stalled = true;
    },
    resume() {
      stalled = false;
      for (const link of links) {
        for (const chunk of link.held) if (!link.to.destroyed) link.to.write(chunk);
        link.held = [];
      }
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((res) => server.close(() => res()));
    },
  };
}
