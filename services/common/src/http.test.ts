/** Client addresses behind proxies: only configured proxies are believed. */
import { describe, expect, it } from 'vitest';
import { clientAddress, plainAddress, trustedProxies } from './http.ts';

describe('client address', () => {
  it('when the socket has no address any more (the client left), then nobody is trusted and nothing throws', () => {
    const trusted = trustedProxies('loopback,10.0.0.0/8');
    // Express asks its "trust proxy" function about req.socket.remoteAddress, undefined once closed.
    expect(trusted(undefined)).toBe(false);
    expect(plainAddress(undefined)).toBe('');
    expect(clientAddress(undefined, '1.2.3.4', trusted)).toBe('');
  });

  it('when the peer is a trusted proxy, then the nearest untrusted hop is the client; a forged left-most entry is never reached', () => {
    const trusted = trustedProxies('loopback,10.0.0.0/8');
    expect(clientAddress('::ffff:127.0.0.1', '6.6.6.6, 5.5.5.5, 10.0.0.2', trusted)).toBe('5.5.5.5');
    expect(clientAddress('9.9.9.9', '5.5.5.5', trusted)).toBe('9.9.9.9');
    expect(clientAddress('127.0.0.1', 'garbage, 10.0.0.3', trusted)).toBe('10.0.0.3');
  });
});
