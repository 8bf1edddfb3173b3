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
import { listenLocal } from './listen.ts';

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

/** VolcEngine's request id: the time (yyyyMMddHHmmss) and 18 hex digits. */
const rid = () =>
  `${new Date().toISOString().replace(/\D/g, '').slice(0, 14)}${randomBytes(9).toString('hex').toUpperCase()}`;

/** The visual API's answer envelope. */
const answer = (code: number, data: unknown, message: string, started: number) => ({
  code,
  data,
  message,
  request_id: rid(),
  status: code,
  time_elapsed: `${(Date.now() - started).toFixed(3)}ms`,
});

/** A gateway refusal: HTTP status, CodeN, Code, Message. */
type GatewayError = [number, number, string, string];

/** The gateway's error body (ResponseMetadata.Error), as VolcEngine answers before the service sees a call. */
function gatewayError(e: GatewayError, action: string, version: string) {
  return {
    ResponseMetadata: {
      RequestId: rid(),
      Action: action,
      Version: version,
      Service: SERVICE,
      Region: REGION,
      Error: { CodeN: e[1], Code: e[2], Message: e[3] },
    },
  };
}

/** Whether the call names an operation this fake serves (POST / with the 2022-08-31 submit or get-result). */
function knownAction(method: string | undefined, pathname: string, action: string, version: string): boolean {
  return (
    method === 'POST' &&
    pathname === '/' &&
    version === '2022-08-31' &&
    (action === 'CVSync2AsyncSubmitTask' || action === 'CVSync2AsyncGetResult')
  );
}

/**
 * What VolcEngine's gateway refuses before the service sees the call: a missing Action or Version,
 * a bad signature (`signature`: counted as a refusal), an operation this fake does not serve.
 */
function gatewayRefusal(
  req: IncomingMessage,
  url: URL,
  raw: Buffer,
  keys: Map<string, string>,
): { error: GatewayError; signature: boolean } | undefined {
  const action = url.searchParams.get('Action') ?? '';
  const version = url.searchParams.get('Version') ?? '';
  if (!action || !version) {
    const missing = action ? 'Version' : 'Action';
    return {
      error: [400, 100002, 'MissingParameter', `The request is missing ${missing} parameter.`],
      signature: false,
    };
  }
  const bad = verify(req, url, raw, keys);
  if (bad) return { error: bad, signature: true };
  if (!knownAction(req.method, url.pathname, action, version)) {
    const message = `Could not find operation ${action} for version ${version}.`;
    return { error: [404, 100008, 'InvalidActionOrVersion', message], signature: false };
  }
  return undefined;
}

/** Why a submit is refused ([code, message]), or undefined: a non-Jimeng req_key, i2v without images, bad frames, a risky prompt. */
function submitRefusal(body: Record<string, unknown>): [number, string] | undefined {
  const reqKey = String(body.req_key ?? '');
  const images = [
    ...(Array.isArray(body.image_urls) ? body.image_urls : []),
    ...(Array.isArray(body.binary_data_base64) ? body.binary_data_base64 : []),
  ];
  if (!reqKey.startsWith('jimeng_') || (reqKey.includes('i2v') && images.length === 0))
    return [50215, 'Input invalid for this service.'];
  if (body.frames !== undefined && body.frames !== 121 && body.frames !== 241)
    return [50215, 'Input invalid for this service.'];
  if (String(body.prompt ?? '').includes('reject-me')) return [50412, 'Text Risk Not Pass'];
  return undefined;
}

/**
 * Where a task is now: in_queue for the first step, generating until `steps` steps (prompts with
 * "never" until `finishAt`), then failed (prompts with "fail-me") or done.
 */
function taskStatus(
  t: { body: Record<string, unknown>; at: number },
  clock: { stepMs: number; steps: number; finishAt: number },
): 'in_queue' | 'generating' | 'failed' | 'done' {
  const step = Math.floor((Date.now() - t.at) / clock.stepMs);
  const prompt = String(t.body.prompt ?? '');
  const ended = Date.now() >= clock.finishAt;
  if (step < 1 && !ended) return 'in_queue';
  if (!ended && (step < clock.steps || prompt.includes('never'))) return 'generating';
  if (prompt.includes('fail-me')) return 'failed';
  return 'done';
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
      const refused = gatewayRefusal(req, url, raw, keys);
      if (refused) {
        if (refused.signature) state.refusals += 1;
        return send(refused.error[0], gatewayError(refused.error, action, version));
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
        const refused = submitRefusal(body);
        if (refused) return send(400, answer(refused[0], null, refused[1], started));
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
      const status = taskStatus(t, { stepMs, steps, finishAt: state.finishAt });
      if (status !== 'done' && status !== 'failed') {
        return send(200, answer(10000, { status, video_url: '', resp_data: '' }, 'Success', started));
      }
      if (status === 'failed') return send(400, answer(50511, null, 'Post Img Risk Not Pass', started));
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
  Object.assign(state, await listenLocal(server));
  return state;
}
