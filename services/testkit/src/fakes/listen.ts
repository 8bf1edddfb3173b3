import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Starts a fake's HTTP server on an ephemeral loopback port. `close` ends open keep-alive
 * connections too, so that a test's teardown never waits for an idle socket.
 */
export async function listenLocal(server: Server): Promise<{ url: string; close: () => Promise<void> }> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}
