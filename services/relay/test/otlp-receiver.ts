/**
 * An in-process OTLP/HTTP trace receiver for tests: a real HTTP server on 127.0.0.1 taking
 * `POST /v1/traces` as the OpenTelemetry exporters send it (OTLP JSON, gzip or not), decoding
 * every span with its service name, ids, kind and attributes.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, unknown>;
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  status: number;
}

export const KIND = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 } as const;

type AnyValue = {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: AnyValue[] };
};
type KeyValue = { key: string; value?: AnyValue };

function anyValue(v: AnyValue | undefined): unknown {
  if (!v) return undefined;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(anyValue);
  return undefined;
}

function attrs(list: KeyValue[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of list ?? []) out[kv.key] = anyValue(kv.value);
  return out;
}

/** Ids arrive as hex in OTLP JSON; base64 (protobuf JSON mapping) is turned into hex too. */
function hexId(id: string | undefined, bytes: number): string {
  if (!id) return '';
  if (id.length === bytes * 2 && /^[0-9a-f]+$/i.test(id)) return id.toLowerCase();
  return Buffer.from(id, 'base64').toString('hex');
}

export interface OtlpReceiver {
  endpoint: string;
  spans: ReceivedSpan[];
  /** Requests whose body could not be decoded (a test should expect none). */
  rejected: number;
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const state = { rejected: 0 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      try {
        let body = Buffer.concat(chunks);
        if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
        if (!String(req.headers['content-type']).includes('json'))
          throw new Error(`unsupported content type ${req.headers['content-type']}`);
        const doc = JSON.parse(body.toString('utf8')) as {
          resourceSpans?: {
            resource?: { attributes?: KeyValue[] };
            scopeSpans?: {
              spans?: {
                traceId?: string;
                spanId?: string;
                parentSpanId?: string;
                name: string;
                kind?: number;
                attributes?: KeyValue[];
                status?: { code?: number };
              }[];
            }[];
          }[];
        };
        for (const rs of doc.resourceSpans ?? []) {
          const service = String(attrs(rs.resource?.attributes)['service.name'] ?? '');
          for (const ss of rs.scopeSpans ?? [])
            for (const s of ss.spans ?? [])
              spans.push({
                service,
                traceId: hexId(s.traceId, 16),
                spanId: hexId(s.spanId, 8),
                parentSpanId: hexId(s.parentSpanId, 8),
                name: s.name,
                kind: s.kind ?? 0,
                attributes: attrs(s.attributes),
                status: s.status?.code ?? 0,
              });
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } catch {
        state.rejected++;
        res.writeHead(400, { 'content-type': 'application/json' }).end('{}');
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    get rejected() {
      return state.rejected;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
