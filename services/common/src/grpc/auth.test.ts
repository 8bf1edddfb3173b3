import { Health } from '@aigw/proto/grpc/health/v1/health';
import { OptionsService, UsersService } from '@aigw/proto/users/v1/users';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../errors.ts';
import { createInternalAuth, runWithInternalAuth } from './auth.ts';
import { generateKeySet, keysOf } from './auth-keys.ts';
import { signToken } from './auth-token.ts';
import { createClient } from './client.ts';
import { type RunningGrpcServer, service, startGrpcServer } from './server.ts';
import type { CallContext } from './types.ts';

// A real users-shaped server with real internal authentication (ADR 0006), real clients.
describe('internal gRPC authentication', () => {
  const keys = generateKeySet();
  const auth = (svc: string) => createInternalAuth(keysOf(keys, svc));
  const seen: { caller?: string; actor?: unknown }[] = [];
  let server: RunningGrpcServer;
  let address: string;

  beforeAll(async () => {
    server = await startGrpcServer({
      port: 0,
      host: '127.0.0.1',
      auth: auth('users'),
      services: [
        service(UsersService, {
          async manageUser(req: { actor?: unknown }, ctx: CallContext) {
            seen.push({ caller: ctx.caller, actor: req.actor });
            return { status: 1, role: 10 };
          },
        } as never),
        service(OptionsService, {
          async updateOption(req: { actor?: unknown; key: string; value: string }, ctx: CallContext) {
            seen.push({ caller: ctx.caller, actor: req.actor });
            return { option: { key: req.key, value: req.value }, version: 1 };
          },
          async listOptions() {
            return { options: [], version: 1 };
          },
        } as never),
      ],
    });
    address = `127.0.0.1:${server.port}`;
  });

  afterAll(async () => {
    await server?.stop(1000);
  });

  const root = { userId: 1, role: 100, username: 'root' };
  const refusal = (p: Promise<unknown>) =>
    p.then(
      () => 'accepted',
      (err: unknown) => (err instanceof AppError ? err.code : String(err)),
    );

  it('when a call carries no credentials, then it is refused UNAUTHENTICATED', async () => {
    const options = createClient(OptionsService, address, { auth: false });
    try {
      expect(await refusal(options.listOptions({ includeSecrets: true }))).toBe('UNAUTHENTICATED');
    } finally {
      options.close();
    }
  });

  it('when a token is signed with a key the server does not know, then it is refused UNAUTHENTICATED', async () => {
    const stranger = createInternalAuth(keysOf(generateKeySet(['gateway']), 'gateway'));
    const options = createClient(OptionsService, address, { auth: stranger });
    try {
      expect(await refusal(options.listOptions({ includeSecrets: true }))).toBe('UNAUTHENTICATED');
    } finally {
      options.close();
    }
  });

  it('when a token is expired, malformed or for another service, then it is refused UNAUTHENTICATED', async () => {
    const gatewayKey = keys.privateKeys.get('gateway');
    if (!gatewayKey) throw new Error('no key');
    const now = Math.floor(Date.now() / 1000);
    const tokens = [
      signToken({ iss: 'gateway', aud: 'users', iat: now - 600, exp: now - 540 }, gatewayKey),
      signToken({ iss: 'gateway', aud: 'billing', iat: now, exp: now + 60 }, gatewayKey),
      signToken({ iss: 'gateway', aud: 'users', iat: now, exp: now + 3600 }, gatewayKey),
      'v1.e30.AAAA',
      'garbage',
    ];
    for (const token of tokens) {
      const options = createClient(OptionsService, address, { auth: { tokenFor: () => `Bearer ${token}` } });
      try {
        expect(await refusal(options.listOptions({}))).toBe('UNAUTHENTICATED');
      } finally {
        options.close();
      }
    }
  });

  it('when a service calls an RPC its allow-list does not give it, then it is refused PERMISSION_DENIED', async () => {
    const users = createClient(UsersService, address, { auth: auth('relay') });
    try {
      expect(await refusal(users.manageUser({ actor: root, id: 2, action: 1 }))).toBe('PERMISSION_DENIED');
    } finally {
      users.close();
    }
  });

  it('when the gateway calls with an actor, then its token signs that actor and the handler sees the caller', async () => {
    const users = createClient(UsersService, address, { auth: auth('gateway') });
    try {
      seen.length = 0;
      await users.manageUser({ actor: root, id: 2, action: 1 });
      expect(seen[0]?.caller).toBe('gateway');
      expect(seen[0]?.actor).toMatchObject(root);
    } finally {
      users.close();
    }
  });

  it('when a service other than the gateway sends a user actor, then it cannot act as root', async () => {
    const options = createClient(OptionsService, address, { auth: auth('billing') });
    try {
      expect(await refusal(options.updateOption({ actor: root, key: 'Notice', value: 'x' }))).toBe('UNAUTHENTICATED');
      // The system actor (user id 0) is how billing seeds its defaults: allowed for it.
      await options.updateOption({ actor: { userId: 0, role: 100, username: 'billing' }, key: 'Notice', value: 'y' });
    } finally {
      options.close();
    }
  });

  it('when a gateway token was signed for one actor, then a request naming another actor is refused', async () => {
    const gateway = auth('gateway');
    const common = { u: 5, r: 1, n: 'alice' };
    // A valid gateway token for alice, replayed with a root actor in the request.
    const options = createClient(OptionsService, address, {
      auth: { tokenFor: (method) => gateway.tokenFor(method, common) },
    });
    try {
      expect(await refusal(options.updateOption({ actor: root, key: 'Notice', value: 'x' }))).toBe('UNAUTHENTICATED');
      await options.updateOption({ actor: { userId: 5, role: 1, username: 'alice' }, key: 'Notice', value: 'x' });
    } finally {
      options.close();
    }
  });

  it('when a client is created inside a service scope, even after awaits, then it signs as that service', async () => {
    // How the in-process stack runs each service under its own key.
    const users = await runWithInternalAuth(auth('relay'), async () => {
      await new Promise((r) => setTimeout(r, 5));
      return createClient(UsersService, address);
    });
    try {
      expect(await refusal(users.manageUser({ actor: root, id: 2, action: 1 }))).toBe('PERMISSION_DENIED');
    } finally {
      users.close();
    }
  });

  it('when a probe asks the health service without credentials, then it answers', async () => {
    const health = createClient(Health, address, { auth: false });
    try {
      expect((await health.check({ service: '' })).status).toBe(1);
    } finally {
      health.close();
    }
  });

  it('when a client calls repeatedly, then it reuses its token until it nears expiry', () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const gateway = createInternalAuth(keysOf(keys, 'gateway'), () => now);
    const method = OptionsService.method.listOptions;
    const first = gateway.tokenFor(method, undefined);
    now += 30_000;
    expect(gateway.tokenFor(method, undefined)).toBe(first);
    now += 15_000;
    expect(gateway.tokenFor(method, undefined)).not.toBe(first);
    const verifier = createInternalAuth(keysOf(keys, 'users'), () => now);
    expect(verifier.verify(first, method).iss).toBe('gateway');
    now += 60_000;
    expect(() => verifier.verify(first, method)).toThrow(/expired/);
  });
});
