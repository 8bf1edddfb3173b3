import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@aigw/local-stack/stack';
import { eventually } from '@aigw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureKeyDir } from '../src/grpc/auth-keys.ts';
import { tracingConfigured } from '../src/telemetry.ts';

const root = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * A real service process with OTEL_EXPORTER_OTLP_ENDPOINT set exports its spans over OTLP/HTTP:
 * a local receiver stands in for the collector.
 */
describe('OpenTelemetry export', () => {
  let receiver: Server;
  let endpoint = '';
  const bodies: Buffer[] = [];
  beforeAll(async () => {
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.url === '/v1/traces') bodies.push(Buffer.concat(chunks));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    receiver?.close();
  });

  it(
    'when a service handles a request and stops, then its HTTP server span reaches the collector (and its probes none)',
    { timeout: 120_000 },
    async () => {
      const httpPort = await freePort();
      // A service process needs its internal gRPC keys (ADR 0006).
      const grpcAuthDir = mkdtempSync(join(tmpdir(), 'aigw-otel-keys-'));
      ensureKeyDir(grpcAuthDir);
      const child = spawn(process.execPath, ['--import', 'tsx', 'services/users/src/main.ts'], {
        cwd: root,
        env: {
          ...process.env,
          HTTP_PORT: String(httpPort),
          GRPC_PORT: '0',
          MONGO_DB: `otel_${httpPort}`,
          OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
          LOG_LEVEL: 'warn',
          SERVICE_NAME: 'users',
          GRPC_AUTH_DIR: grpcAuthDir,
          TOTP_KEY_SECRET: randomBytes(32).toString('hex'),
        },
        stdio: 'inherit',
      });
      try {
        await eventually(
          () =>
            fetch(`http://127.0.0.1:${httpPort}/readyz`).then(
              (r) => r.status,
              () => 0,
            ),
          (status) => status === 200,
          { timeoutMs: 60_000, intervalMs: 250, what: 'the users service ready' },
        );
        // A request that is not a probe starts a trace; the probes above start none.
        expect((await fetch(`http://127.0.0.1:${httpPort}/no-such-page`)).status).toBe(404);
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
        const all = Buffer.concat(bodies).toString('latin1');
        expect(all).toContain('aigw-users');
        expect(all).toContain('/no-such-page');
        expect(all).not.toContain('/readyz');
      } finally {
        child.kill('SIGKILL');
      }
    },
  );
});

describe('tracingConfigured', () => {
  it('when no endpoint or exporter is set, then tracing stays off (no spans built for nowhere)', () => {
    expect(tracingConfigured({})).toBe(false);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: '' })).toBe(false);
  });
  it('when an OTLP endpoint is set, then tracing starts unless the SDK is disabled', () => {
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel:4318' })).toBe(true);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://otel:4318/v1/traces' })).toBe(true);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel:4318', OTEL_SDK_DISABLED: 'true' })).toBe(
      false,
    );
  });
  it('when an exporter is named, then it decides ("none" turns tracing off)', () => {
    expect(tracingConfigured({ OTEL_TRACES_EXPORTER: 'console' })).toBe(true);
    expect(tracingConfigured({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel:4318' })).toBe(
      false,
    );
  });
});
