import { setTimeout as sleep } from 'node:timers/promises';
import { Health, HealthCheckResponse_ServingStatus as ServingStatus } from '@aigw/proto/grpc/health/v1/health';
import { RelayAdminService } from '@aigw/proto/relay/v1/relay';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../errors.ts';
import { createClient } from './client.ts';
import { type RunningGrpcServer, service, startGrpcServer } from './server.ts';
import { toGrpcService } from './service-definition.ts';

// A real server and real clients over 127.0.0.1 with an ephemeral port: no mocks. Internal
// authentication is off here (auth: false); auth.test.ts covers it.
describe('gRPC adapter', () => {
  let server: RunningGrpcServer;
  let address: string;
  const hookErrors: unknown[] = [];
  const slowCall = { aborted: false, reason: undefined as unknown };

  beforeAll(async () => {
    server = await startGrpcServer({
      auth: false,
      port: 0,
      host: '127.0.0.1',
      services: [
        service(RelayAdminService, {
          async testChannel(req, ctx) {
            if (req.channelId === 404) throw new AppError('NOT_FOUND', '渠道不存在');
            if (req.channelId === 500) throw new Error('mongo password=hunter2 refused');
            if (req.channelId === 503) throw new AppError('UNAVAILABLE', '会话服务暂不可用，请稍后重试');
            if (req.channelId === 409) throw new AppError('FAILED_PRECONDITION', '用户额度不足', { retryAfterMs: 750 });
            if (req.channelId === 999) {
              await sleep(10_000, undefined, { signal: ctx.signal }).catch(() => {
                slowCall.aborted = ctx.signal.aborted;
                slowCall.reason = ctx.signal.reason;
              });
              return { success: true };
            }
            if (req.channelId === 998) await sleep(100);
            const caller = ctx.metadata.get('x-caller')[0] ?? '';
            return { success: true, timeMs: 42, message: `${req.model} via ${req.channel?.name} for ${caller}` };
          },
        }),
      ],
      onError: (err) => hookErrors.push(err),
    });
    address = `127.0.0.1:${server.port}`;
  });

  afterAll(async () => {
    await server?.stop(1000);
  });

  it('when a call succeeds, then the client gets the decoded response', async () => {
    const relay = createClient(RelayAdminService, address, { auth: false });
    try {
      const res = await relay.testChannel(
        { channelId: 7, model: 'gpt-4o-mini', channel: { id: 7, name: 'primary', priority: 2 } },
        { metadata: { 'x-caller': 'channels' } },
      );
      expect(res.$typeName).toBe('aigw.relay.v1.TestChannelResponse');
      expect(res.success).toBe(true);
      expect(res.timeMs).toBe(42);
      expect(typeof res.timeMs).toBe('number');
      expect(res.message).toBe('gpt-4o-mini via primary for channels');
    } finally {
      relay.close();
    }
  });

  it('when many calls are in flight at once, then each listens to the stop signal without a leak warning', async () => {
    const relay = createClient(RelayAdminService, address, { auth: false });
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const answers = await Promise.all(Array.from({ length: 30 }, () => relay.testChannel({ channelId: 998 })));
      expect(answers.every((a) => a.success)).toBe(true);
      // Node emits process warnings on the next tick.
      await new Promise((r) => setImmediate(r));
      expect(warnings).not.toContain('MaxListenersExceededWarning');
    } finally {
      process.off('warning', onWarning);
      relay.close();
    }
  });

  it('when the handler throws AppError NOT_FOUND, then the client rejects with the same code and message', async () => {
    const relay = createClient(RelayAdminService, address, { auth: false });
    try {
      const err = await relay.testChannel({ channelId: 404 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).code).toBe('NOT_FOUND');
      expect((err as AppError).message).toBe('渠道不存在');
    } finally {
      relay.close();
    }
  });

  it('when the handler marks its refusal retryable (retryAfterMs), then the client gets it with the code and message; others have none', async () => {
    const relay = createClient(RelayAdminService, address, { auth: false });
    try {
      const err = (await relay.testChannel({ channelId: 409 }).catch((e: unknown) => e)) as AppError;
      expect([err.code, err.message, err.retryAfterMs]).toEqual(['FAILED_PRECONDITION', '用户额度不足', 750]);
      const plain = (await relay.testChannel({ channelId: 404 }).catch((e: unknown) => e)) as AppError;
      expect(plain.retryAfterMs).toBeUndefined();
    } finally {
      relay.close();
    }
  });

  it("when the handler throws AppError UNAVAILABLE, then its own message arrives (only the library's texts are replaced)", async () => {
    const relay = createClient(RelayAdminService, address, { auth: false });
    try {
      const err = await relay.testChannel({ channelId: 503 }).catch((e: unknown) => e);
      expect((err as AppError).code).toBe('UNAVAILABLE');
      expect((err as AppError).message).toBe('会话服务暂不可用，请稍后重试');
    } finally {
      relay.close();
    }
  });

  it('when the handler throws something else, then the client sees INTERNAL and only the hook sees the cause', async () => {
    const relay = createClient(RelayAdminService, address, { auth: false });
    try {
      const err = await relay.testChannel({ channelId: 500 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).code).toBe('INTERNAL');
      expect((err as AppError).message).not.toContain('hunter2');
      expect(hookErrors.some((e) => e instanceof Error && e.message.includes('hunter2'))).toBe(true);
    } finally {
      relay.close();
    }
  });

  it('when the handler outlives the deadline, then the call fails DEADLINE_EXCEEDED and the handler is aborted', async () => {
    const relay = createClient(RelayAdminService, address, { auth: false, deadlineMs: 5000 });
    try {
      const started = Date.now();
      const err = await relay.testChannel({ channelId: 999 }, { deadlineMs: 150 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).code).toBe('DEADLINE_EXCEEDED');
      // The library's text ("Deadline exceeded after 0.150s,... remote_addr=...") stays in the cause.
      expect((err as AppError).message).toBe('服务响应超时，请稍后重试');
      expect(String((err as AppError).cause)).toMatch(/Deadline exceeded/);
      // Well before the handler's 10 s: the deadline ended the call (a bound on a hang, not a speed check).
      expect(Date.now() - started).toBeLessThan(5000);
      await expect.poll(() => slowCall.aborted, { timeout: 10_000 }).toBe(true);
      expect(slowCall.reason).toBeInstanceOf(AppError);
    } finally {
      relay.close();
    }
  });

  it('when the default deadline is shorter than the handler, then it applies too', async () => {
    const relay = createClient(RelayAdminService, address, { auth: false, deadlineMs: 100 });
    try {
      const err = await relay.testChannel({ channelId: 999 }).catch((e: unknown) => e);
      expect((err as AppError).code).toBe('DEADLINE_EXCEEDED');
    } finally {
      relay.close();
    }
  });

  it('when the caller aborts, then the call rejects at once', async () => {
    const relay = createClient(RelayAdminService, address, { auth: false });
    try {
      const controller = new AbortController();
      const pending = relay.testChannel({ channelId: 999 }, { signal: controller.signal }).catch((e: unknown) => e);
      setTimeout(() => controller.abort(), 50);
      const err = await pending;
      expect(err).toBeInstanceOf(AppError);
    } finally {
      relay.close();
    }
  });

  it('when the health service is asked, then the server and its services are SERVING', async () => {
    const health = createClient(Health, address, { auth: false });
    try {
      expect((await health.check({ service: '' })).status).toBe(ServingStatus.SERVING);
      expect((await health.check({ service: RelayAdminService.typeName })).status).toBe(ServingStatus.SERVING);
      const err = await health.check({ service: 'no.such.Service' }).catch((e: unknown) => e);
      expect((err as AppError).code).toBe('NOT_FOUND');

      server.health.setStatus('', ServingStatus.NOT_SERVING);
      expect((await health.check({ service: '' })).status).toBe(ServingStatus.NOT_SERVING);
      server.health.setStatus('', ServingStatus.SERVING);
    } finally {
      health.close();
    }
  });

  it('when a client watches health, then it gets the current status and every change', async () => {
    const health = createClient(Health, address, { auth: false, deadlineMs: 3000 });
    const service = 'aigw.test.Watched';
    server.health.setStatus(service, ServingStatus.SERVING);
    const seen: ServingStatus[] = [];
    try {
      for await (const res of health.watch({ service })) {
        seen.push(res.status);
        if (seen.length === 1) server.health.setStatus(service, ServingStatus.NOT_SERVING);
        else break;
      }
      expect(seen).toEqual([ServingStatus.SERVING, ServingStatus.NOT_SERVING]);
    } finally {
      health.close();
    }
  });

  it('when two clients share an address, then closing one leaves the other working', async () => {
    const a = createClient(RelayAdminService, address, { auth: false });
    const b = createClient(Health, address, { auth: false });
    a.close();
    expect((await b.check({ service: '' })).status).toBe(ServingStatus.SERVING);
    const err = await a.testChannel({ channelId: 1 }).catch((e: unknown) => e);
    expect((err as AppError).code).toBe('UNAVAILABLE');
    b.close();
  });

  it('when nothing listens, then the call fails UNAVAILABLE', async () => {
    const other = await startGrpcServer({ auth: false, port: 0, host: '127.0.0.1', services: [] });
    const port = other.port;
    await other.stop(100);
    const relay = createClient(RelayAdminService, `127.0.0.1:${port}`, { auth: false, deadlineMs: 2000 });
    try {
      const err = await relay.testChannel({ channelId: 1 }).catch((e: unknown) => e);
      expect((err as AppError).code).toBe('UNAVAILABLE');
      expect((err as AppError).message).toBe('服务暂不可用，请稍后重试');
      expect(String((err as AppError).cause)).not.toContain('服务暂不可用');
    } finally {
      relay.close();
    }
  });

  it('when the server stops, then health watches end and new calls fail UNAVAILABLE', async () => {
    const other = await startGrpcServer({ auth: false, port: 0, host: '127.0.0.1', services: [] });
    const health = createClient(Health, `127.0.0.1:${other.port}`, { auth: false, deadlineMs: 5000 });
    try {
      const seen: ServingStatus[] = [];
      const watching = (async () => {
        for await (const res of health.watch({ service: '' })) seen.push(res.status);
      })();
      await expect.poll(() => seen.length).toBe(1);
      const started = Date.now();
      await other.stop(3000);
      await watching;
      expect(Date.now() - started).toBeLessThan(2000);
      expect(seen).toEqual([ServingStatus.SERVING, ServingStatus.NOT_SERVING]);
      const err = await health.check({ service: '' }).catch((e: unknown) => e);
      expect((err as AppError).code).toBe('UNAVAILABLE');
    } finally {
      health.close();
    }
  });

  it('maps every method to its full gRPC path', () => {
    const def = toGrpcService(RelayAdminService);
    expect(def.testChannel?.path).toBe('/aigw.relay.v1.RelayAdminService/TestChannel');
    expect(def.testChannel?.responseStream).toBe(false);
  });
});
