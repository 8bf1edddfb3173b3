/**
 * A fake VolcEngine visual API serving Jimeng video generation: `POST /?Action=CVSync2AsyncSubmitTask&Version=2022-08-31`
 * and `POST /?Action=CVSync2AsyncGetResult&Version=2022-08-31`.
 *
 * Every call must carry VolcEngine's request signature, checked here with this file's own
 * implementation of the algorithm: `Authorization: HMAC-SHA256 Credential=AK/yyyymmdd/cn-north-1/cv/request,
 * SignedHeaders=..., Signature=...` over the canonical request (method, path, sorted query, the
 * signed headers, which must include host and x-date, and the body's SHA-256, which must equal
 * X-Content-Sha256), with the key derived from the secret key by date, region, service and
 * "request". A wrong signature gets VolcEngine's gateway error: HTTP 401 with
 * `{ResponseMetadata: {..., Error: {CodeN: 100010, Code: "SignatureDoesNotMatch", Message}}}`;
 * an unknown access key 100009 InvalidAccessKey, a missing Authorization 100003, an X-Date more
 * than 15 minutes off 100006 InvalidTimestamp, an unknown Action or Version 100008.
 *
 * Business answers are `{code, data, message, request_id, status, time_elapsed}`: a submit gets
 * `data.task_id`; GetResult moves the task through in_queue and generating to done with
 * `video_url` (served as MP4 bytes). Prompts with "fail-me" fail at the end (HTTP 400, code 50511
 * "Post Img Risk Not Pass", data null), "never" stay generating (until `finishAt`),
 * "reject-me" is refused at submit (HTTP 400, code 50412 "Text Risk Not Pass"). An image-to-video
 * req_key without an image is refused with 50215. An unknown task id answers status not_found.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeJimeng {
  url: string;
  submits: Record<string, unknown>[];
  /** GetResult calls answered. */
  queries: number;
  /** Signature checks that failed (any reason). */
  refusals: number;
  /** From this time on (ms) every unfinished task ends. */
  finishAt: number;
  close(): Promise<void>;
}

export const JIMENG_MP4 = Buffer.from('0000001c667479706d703432000000006d70343269736f6d', 'hex');

const REGION = 'cn-north-1';
const SERVICE = 'cv';

/** The request as VolcEngine canonicalises it, and the signature expected for it. */
function expectedSignature(
  req: IncomingMessage,
  url: URL,
  body: Buffer,
  signedHeaders: string[],
  secretKey: string,
  xDate: string,
  scope: string,
): string {
  const enc = (s: string) =>
    encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  const pairs: [string, string][] = [];
  url.searchParams.forEach((v, k) => {
    pairs.push([enc(k), enc(v)]);
  });
  pairs.sort((a, b) => (a[0] === b[0] ? (a[1] < b[1] ? -1 : 1) : a[0] < b[0] ? -1 : 1));
  const canonicalHeaders = signedHeaders
    .map((h) => {
      const raw = req.headers[h];
      const v = Array.isArray(raw) ? raw.join(',') : (raw ?? '');
      return `${h}:${v.trim()}\n`;
    })
    .join('');
  const bodyHash = createHash('sha256').update(body).digest('hex');
  const canonicalRequest = [
    req.method ?? 'GET',
    url.pathname,
    pairs.map(([k, v]) => `${k}=${v}`).join('&'),
    canonicalHeaders,
    signedHeaders.join(';'),
    bodyHash,
  ].join('\n');
  const stringToSign = `HMAC-SHA256\n${xDate}\n${scope}\n${createHash('sha256').update(canonicalRequest).digest('hex')}`;
  const kDate = createHmac('sha256', Buffer.from(secretKey, 'utf8')).update(xDate.slice(0, 8)).digest();
  const kRegion = createHmac('sha256', kDate).update(REGION).digest();
  const kService = createHmac('sha256', kRegion).update(SERVICE).digest();
  const kSigning = createHmac('sha256', kService).update('request').digest();
  return createHmac('sha256', kSigning).update(stringToSign).digest('hex');
}

/** Checks the signature; the gateway error (HTTP status, CodeN, Code, Message) or undefined. */
function verify(
  req: IncomingMessage,
  url: URL,
  body: Buffer,
  keys: Map<string, string>,
): [number, number, string, string] | undefined {
  const auth = req.headers.authorization;
  if (!auth) return [401, 100003, 'MissingAuthenticationToken', 'Request is missing Authentication Token.'];
  const m =
    /^HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/.exec(
      auth,
    );
  if (!m) return [401, 100005, 'MissingSignature', 'The request is missing signature.'];
  const [, ak, day, region, service, signedList, signature] = m as unknown as string[];
  const secret = keys.get(ak as string);
  if (secret === undefined) {
    return [401, 100009, 'InvalidAccessKey', `The accesskey [${ak}] included in the request is invalid.`];
  }
  const xDate = String(req.headers['x-date'] ?? '');
  const at = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(xDate);
  const when = at ? Date.UTC(+at[1]!, +at[2]! - 1, +at[3]!, +at[4]!, +at[5]!, +at[6]!) : Number.NaN;
  if (!at || Math.abs(Date.now() - when) > 15 * 60_000 || xDate.slice(0, 8) !== day) {
    return [400, 100006, 'InvalidTimestamp', 'The signature of the request is expired.'];
  }
  const signed = (signedList as string).split(';');
  const hash = createHash('sha256').update(body).digest('hex');
  const mismatch: [number, number, string, string] = [
    401,
    100010,
    'SignatureDoesNotMatch',
    'The request signature we calculated does not match the signature you provided. Check your Secret Access Key and signing method. Consult the service documentation for details.',
  ];
  if (
    region !== REGION ||
    service !== SERVICE ||
    !signed.includes('host') ||
    !signed.includes('x-date') ||
    (req.headers['x-content-sha256'] !== undefined && req.headers['x-content-sha256'] !== hash)
  ) {
    return mismatch;
  }
  const want = Buffer.from(
    expectedSignature(req, url, body, signed, secret, xDate, `${day}/${region}/${service}/request`),
    'hex',
  );
  const got = Buffer.from(signature as string, 'hex');
  if (got.length !== want.length || !timingSafeEqual(got, want)) return mismatch;
  return undefined;
}

export async function startFakeJimeng(opts: {
  accessKey: string;
  secretKey: string;
  stepMs?: number;
  steps?: number;
}): Promise<FakeJimeng> {
  const stepMs = opts.stepMs ?? 250;
  const steps = opts.steps ?? 3;
  const keys = new Map([[opts.accessKey, opts.secretKey]]);
  const tasks = new Map<string, { body: Record<string, unknown>; at: number }>();
  const state: FakeJimeng = {
    url: '',
    submits: [],
    queries: 0,
    refusals: 0,
    finishAt: Number.POSITIVE_INFINITY,
    close: async () => undefined,
  };
  const rid = () =>
    `${new Date().toISOString().replace(/\D/g, '').slice(0, 14)}${randomBytes(9).toString('hex').toUpperCase()}`;
  const answer = (code: number, data: unknown, message: string, started: number) => ({
    code,
    data,
    message,
    request_id: rid(),
    status: code,
    time_elapsed: `${(Date.now() - started).toFixed(3)}ms`,
  });

  const server: Server = createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify(body));
    };
    void (async () => {
      const started = Date.now();
      const url = new URL(req.url ?? '/', 'http://x');
      const mp4 = /^\/videos\/([^/]+)\.mp4$/.exec(url.pathname);
      if (req.method === 'GET' && mp4) {
        const t = tasks.get(mp4[1] as string);
        if (!t) return send(404, { message: 'not found' });
        res.writeHead(200, { 'content-type': 'video/mp4' });
        return res.end(JIMENG_MP4);
      }
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const raw = Buffer.concat(chunks);
      const action = url.searchParams.get('Action') ?? '';
      const version = url.searchParams.get('Version') ?? '';
      const meta = (e: [number, number, string, string]) =>
        send(e[0], {
          ResponseMetadata: {
            RequestId: rid(),
            Action: action,
            Version: version,
            Service: SERVICE,
            Region: REGION,
            Error: { CodeN: e[1], Code: e[2], Message: e[3] },
          },
        });
      if (!action || !version) {
        return meta([
          400,
          100002,
          'MissingParameter',
          `The request is missing ${action ? 'Version' : 'Action'} parameter.`,
        ]);
      }
      const bad = verify(req, url, raw, keys);
      if (bad) {
        state.refusals += 1;
        return meta(bad);
      }
      if (
        req.method !== 'POST' ||
        url.pathname !== '/' ||
        version !== '2022-08-31' ||
        (action !== 'CVSync2AsyncSubmitTask' && action !== 'CVSync2AsyncGetResult')
      ) {
        return meta([
          404,
          100008,
          'InvalidActionOrVersion',
          `Could not find operation ${action} for version ${version}.`,
        ]);
      }
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(raw.toString('utf8') || '{}') as Record<string, unknown>;
      } catch {
        return send(400, answer(50215, null, 'Input invalid for this service.', started));
      }
      const reqKey = String(body.req_key ?? '');
      if (action === 'CVSync2AsyncSubmitTask') {
        state.submits.push(body);
        const images = [
          ...(Array.isArray(body.image_urls) ? body.image_urls : []),
          ...(Array.isArray(body.binary_data_base64) ? body.binary_data_base64 : []),
        ];
        if (!reqKey.startsWith('jimeng_') || (reqKey.includes('i2v') && images.length === 0)) {
          return send(400, answer(50215, null, 'Input invalid for this service.', started));
        }
        if (body.frames !== undefined && body.frames !== 121 && body.frames !== 241) {
          return send(400, answer(50215, null, 'Input invalid for this service.', started));
        }
        if (String(body.prompt ?? '').includes('reject-me')) {
          return send(400, answer(50412, null, 'Text Risk Not Pass', started));
        }
        const id = `${7_000_000_000_000_000_000n + BigInt(Math.floor(Math.random() * 1e15))}`;
        tasks.set(id, { body, at: Date.now() });
        return send(200, answer(10000, { task_id: id }, 'Success', started));
      }
      state.queries += 1;
      const id = String(body.task_id ?? '');
      const t = tasks.get(id);
      if (!t || String(t.body.req_key) !== reqKey) {
        return send(200, answer(10000, { status: 'not_found', video_url: '', resp_data: '' }, 'Success', started));
      }
      const step = Math.floor((Date.now() - t.at) / stepMs);
      const prompt = String(t.body.prompt ?? '');
      const ended = Date.now() >= state.finishAt;
      if (step < 1 && !ended) {
        return send(200, answer(10000, { status: 'in_queue', video_url: '', resp_data: '' }, 'Success', started));
      }
      if (!ended && (step < steps || prompt.includes('never'))) {
        return send(200, answer(10000, { status: 'generating', video_url: '', resp_data: '' }, 'Success', started));
      }
      if (prompt.includes('fail-me')) return send(400, answer(50511, null, 'Post Img Risk Not Pass', started));
      return send(
        200,
        answer(
          10000,
          { status: 'done', video_url: `${state.url}/videos/${id}.mp4`, resp_data: '' },
          'Success',
          started,
        ),
      );
    })().catch((err) => send(500, answer(50500, null, `Internal Error: ${String(err)}`, Date.now())));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () =>
    new Promise<void>((r) => {
      server.close(() => r());
      server.closeAllConnections();
    });
  return state;
}
