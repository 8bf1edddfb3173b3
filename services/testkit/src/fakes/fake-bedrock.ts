/**
 * A fake Amazon Bedrock runtime (InvokeModel and InvokeModelWithResponseStream for Anthropic's
 * models) on 127.0.0.1. It checks every request's SigV4 signature the way AWS does (its own
 * implementation, not the relay's signer): known access key, region and service in the scope,
 * a fresh x-amz-date, the payload hash, and the signature over the canonical request rebuilt from
 * the bytes received. Streams are AWS event-stream messages with real CRC32 checksums; errors are
 * Bedrock's (`{"message"}` with `x-amzn-ErrorType`), in the stream as exception messages.
 *
 * @example
 * const fake = await startFakeBedrock({ region: 'us-east-1', credentials: { AKIDEXAMPLE: 'secret' } });
 * // channel type 33, key `AKIDEXAMPLE|secret|us-east-1`, base_url fake.url
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { claudeEvents, claudeMessage, replyWords } from './wire-claude.ts';

export interface FakeBedrockBehaviour {
  reply: string;
  inputTokens: number;
  /** Non-zero: answer this status with Bedrock's error body. */
  status: number;
  errorType: string;
  message: string;
  /** Fail only the next N requests; 0 = while status is set. */
  failTimes: number;
  /** In streams: send this exception message (e.g. throttlingException) instead of the answer. */
  streamException?: string;
  chunkDelayMs: number;
  toolCall?: { name: string; arguments: Record<string, unknown> };
}

export interface BedrockRequest {
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
  /** Why the signature check failed, when it did. */
  signatureError?: string;
}

export interface FakeBedrock {
  url: string;
  requests: BedrockRequest[];
  set(b: Partial<FakeBedrockBehaviour>): void;
  close(): Promise<void>;
}

const DEFAULTS: FakeBedrockBehaviour = {
  reply: 'Hello from Bedrock',
  inputTokens: 12,
  status: 0,
  errorType: 'InternalServerException',
  message: 'upstream failure',
  failTimes: 0,
  chunkDelayMs: 0,
};

/** Bedrock's Anthropic model ids the fake serves. */
const MODELS = new Set([
  'anthropic.claude-3-haiku-20240307-v1:0',
  'anthropic.claude-3-5-sonnet-20240620-v1:0',
  'anthropic.claude-3-5-sonnet-20241022-v2:0',
  'anthropic.claude-3-5-haiku-20241022-v1:0',
  'anthropic.claude-3-7-sonnet-20250219-v1:0',
  'anthropic.claude-3-opus-20240229-v1:0',
]);

// ---- CRC32 (IEEE 802.3, reflected, polynomial 0xEDB88320), table-driven ----
const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();
function crc(buf: Uint8Array): number {
  let c = 0xffffffff;
  for (const byte of buf) c = (CRC_TABLE[(c ^ byte) & 0xff] as number) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** One event-stream message with string headers. */
export function encodeEventMessage(headers: Record<string, string>, payload: Buffer): Buffer {
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(headers)) {
    const n = Buffer.from(name, 'utf8');
    const v = Buffer.from(value, 'utf8');
    const h = Buffer.alloc(1 + n.length + 1 + 2 + v.length);
    h.writeUInt8(n.length, 0);
    n.copy(h, 1);
    h.writeUInt8(7, 1 + n.length);
    h.writeUInt16BE(v.length, 2 + n.length);
    v.copy(h, 4 + n.length);
    parts.push(h);
  }
  const headerBytes = Buffer.concat(parts);
  const total = 12 + headerBytes.length + payload.length + 4;
  const msg = Buffer.alloc(total);
  msg.writeUInt32BE(total, 0);
  msg.writeUInt32BE(headerBytes.length, 4);
  msg.writeUInt32BE(crc(msg.subarray(0, 8)), 8);
  headerBytes.copy(msg, 12);
  payload.copy(msg, 12 + headerBytes.length);
  msg.writeUInt32BE(crc(msg.subarray(0, total - 4)), total - 4);
  return msg;
}

// ---- SigV4 verification, as the service does it ----
const sha256 = (d: string | Buffer) => createHash('sha256').update(d).digest('hex');
const hmacOf = (k: Buffer | string, d: string) => createHmac('sha256', k).update(d).digest();
/** RFC 3986 unreserved characters stay, everything else is %XX (upper-case hex). */
function rfc3986(s: string): string {
  let out = '';
  for (const byte of Buffer.from(s, 'utf8')) {
    const ch = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~]/.test(ch) ? ch : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

function verifySigV4(
  req: IncomingMessage,
  body: Buffer,
  region: string,
  credentials: Record<string, string>,
  now: number,
): string | undefined {
  const auth = String(req.headers.authorization ?? '');
  const m =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(
      auth,
    );
  if (!m) return 'missing';
  const [, accessKey, day, scopeRegion, service, signedHeaders, signature] = m as unknown as string[];
  const secret = credentials[accessKey as string];
  if (secret === undefined) return 'unknown-key';
  if (scopeRegion !== region || service !== 'bedrock') return 'scope';
  const stamp = String(req.headers['x-amz-date'] ?? '');
  const t = Date.parse(
    `${stamp.slice(0, 4)}-${stamp.slice(4, 6)}-${stamp.slice(6, 8)}T${stamp.slice(9, 11)}:${stamp.slice(11, 13)}:${stamp.slice(13, 15)}Z`,
  );
  if (!Number.isFinite(t) || stamp.slice(0, 8) !== day) return 'date';
  if (Math.abs(now - t) > 5 * 60_000) return 'expired';
  const names = (signedHeaders as string).split(';');
  if (!names.includes('host') || !names.includes('x-amz-date')) return 'signed-headers';
  const payloadHash = sha256(body);
  const declared = req.headers['x-amz-content-sha256'];
  if (declared !== undefined && declared !== payloadHash) return 'payload';
  const rawUrl = req.url ?? '/';
  const q = rawUrl.indexOf('?');
  const wirePath = q >= 0 ? rawUrl.slice(0, q) : rawUrl;
  const uri = wirePath
    .split('/')
    .map((seg) => rfc3986(seg))
    .join('/');
  const query = q >= 0 ? rawUrl.slice(q + 1) : '';
  const canonicalQuery = query
    ? query
        .split('&')
        .map((p) => {
          const [k = '', v = ''] = p.split('=');
          return `${rfc3986(decodeURIComponent(k))}=${rfc3986(decodeURIComponent(v))}`;
        })
        .sort()
        .join('&')
    : '';
  const headerLines = names
    .map((n) => {
      const v = req.headers[n];
      const value = Array.isArray(v) ? v.join(',') : String(v ?? '');
      return `${n}:${value.trim().replace(/\s+/g, ' ')}\n`;
    })
    .join('');
  const canonical = `${req.method}\n${uri}\n${canonicalQuery}\n${headerLines}\n${signedHeaders}\n${payloadHash}`;
  const scope = `${day}/${scopeRegion}/bedrock/aws4_request`;
  const stringToSign = `AWS4-HMAC-SHA256\n${stamp}\n${scope}\n${sha256(canonical)}`;
  let key = hmacOf(`AWS4${secret}`, day as string);
  for (const part of [scopeRegion as string, 'bedrock', 'aws4_request']) key = hmacOf(key, part);
  const expected = Buffer.from(createHmac('sha256', key).update(stringToSign).digest('hex'));
  const given = Buffer.from(signature as string);
  return expected.length === given.length && timingSafeEqual(expected, given) ? undefined : 'signature';
}

const SIG_MESSAGES: Record<string, [number, string, string]> = {
  missing: [403, 'MissingAuthenticationTokenException', 'Missing Authentication Token'],
  'unknown-key': [403, 'UnrecognizedClientException', 'The security token included in the request is invalid.'],
  expired: [403, 'InvalidSignatureException', 'Signature expired: the request time is too far from the server time.'],
};

/** AWS's answer to a request whose signature check failed: [status, error type, message]. */
function signatureRefusal(sigError: string): [number, string, string] {
  return (
    SIG_MESSAGES[sigError] ?? [
      403,
      'InvalidSignatureException',
      'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.',
    ]
  );
}

/** A Bedrock error: `{"message"}` with the error type in x-amzn-ErrorType. */
function error(res: ServerResponse, status: number, type: string, message: string): void {
  const text = JSON.stringify({ message });
  res.writeHead(status, {
    'content-type': 'application/json',
    'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** Bedrock's ValidationException message for an Anthropic body it refuses, or undefined when it takes it. */
function malformedClaudeBody(body: Record<string, unknown>): string | undefined {
  if (body.anthropic_version !== 'bedrock-2023-05-31')
    return 'Malformed input request: #: required key [anthropic_version] not found, please reformat your input and try again.';
  for (const k of ['model', 'stream'])
    if (k in body)
      return `Malformed input request: #: extraneous key [${k}] is not permitted, please reformat your input and try again.`;
  if (!Array.isArray(body.messages) || typeof body.max_tokens !== 'number')
    return 'Malformed input request: #: required key [max_tokens] not found, please reformat your input and try again.';
  return undefined;
}

export async function startFakeBedrock(opts: {
  region: string;
  credentials: Record<string, string>;
  behaviour?: Partial<FakeBedrockBehaviour>;
}): Promise<FakeBedrock> {
  let b: FakeBedrockBehaviour = { ...DEFAULTS, ...opts.behaviour };
  const requests: BedrockRequest[] = [];

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const rec: BedrockRequest = { path: req.url ?? '/', headers: req.headers, body: {} };
      requests.push(rec);
      const sigError = verifySigV4(req, raw, opts.region, opts.credentials, Date.now());
      if (sigError) {
        rec.signatureError = sigError;
        return error(res, ...signatureRefusal(sigError));
      }
      try {
        rec.body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
      } catch {
        return error(
          res,
          400,
          'ValidationException',
          'Malformed input request, please reformat your input and try again.',
        );
      }
      const m = /^\/model\/([^/]+)\/(invoke|invoke-with-response-stream)$/.exec(req.url ?? '');
      if (!m) return error(res, 404, 'UnknownOperationException', 'Unknown operation');
      const modelId = decodeURIComponent(m[1] as string);
      if (!MODELS.has(modelId))
        return error(res, 400, 'ValidationException', 'The provided model identifier is invalid.');
      if (b.status) {
        const status = b.status;
        if (b.failTimes > 0 && --b.failTimes === 0) b.status = 0;
        return error(res, status, b.errorType, b.message);
      }
      const body = rec.body;
      const malformed = malformedClaudeBody(body);
      if (malformed) return error(res, 400, 'ValidationException', malformed);
      const toolCall = b.toolCall && Array.isArray(body.tools) && body.tools.length > 0 ? b.toolCall : undefined;
      const o = { model: modelId, reply: b.reply, inputTokens: b.inputTokens, toolCall };
      if (m[2] === 'invoke') {
        const text = JSON.stringify(claudeMessage(o));
        res.writeHead(200, {
          'content-type': 'application/json',
          'x-amzn-bedrock-input-token-count': String(b.inputTokens),
          'content-length': Buffer.byteLength(text),
        });
        return res.end(text);
      }
      void stream(res, o);
    });
  });

  async function stream(res: ServerResponse, o: Parameters<typeof claudeEvents>[0]) {
    res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
    if (b.streamException) {
      res.end(
        encodeEventMessage(
          { ':exception-type': b.streamException, ':content-type': 'application/json', ':message-type': 'exception' },
          Buffer.from(JSON.stringify({ message: b.message })),
        ),
      );
      return;
    }
    const events = claudeEvents(o);
    const last = events[events.length - 1] as Record<string, unknown>;
    last['amazon-bedrock-invocationMetrics'] = {
      inputTokenCount: o.inputTokens,
      outputTokenCount: replyWords(o.reply).length,
      invocationLatency: 5,
      firstByteLatency: 1,
    };
    for (const ev of events) {
      if (res.destroyed) return;
      const payload = Buffer.from(JSON.stringify({ bytes: Buffer.from(JSON.stringify(ev)).toString('base64') }));
      const msg = encodeEventMessage(
        { ':event-type': 'chunk', ':content-type': 'application/json', ':message-type': 'event' },
        payload,
      );
      // Split each message across two writes: the decoder must join partial reads.
      res.write(msg.subarray(0, 7));
      res.write(msg.subarray(7));
      if (b.chunkDelayMs) await new Promise((r) => setTimeout(r, b.chunkDelayMs));
    }
    res.end();
  }

  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    set(p) {
      b = { ...b, ...p };
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
