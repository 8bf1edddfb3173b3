/**
 * A fake Kling API. Every call needs `Authorization: Bearer <JWT>`: HS256 over
 * `header.payload`, signed with the secret key of the access key named in `iss`, with `exp` in
 * the future and `nbf` in the past (else 401 `{code: 1000..1004}` as Kling answers).
 * `POST /v1/videos/{text2video|image2video}` answers `{code: 0, message: "SUCCEED", request_id,
 * data: {task_id, task_status: "submitted", created_at, updated_at}}`; `GET
 * /v1/videos/{kind}/{task_id}` moves the task through processing to succeed with
 * `task_result.videos[{id, url, duration}]`. Prompts with "fail-me" fail (task_status_msg),
 * "never" stay processing (until `finishAt`; "never fail-me" then fails), "reject-me" is refused at submit (400, code 1301).
 * The video URLs serve MP4 bytes.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { listenLocal } from './listen.ts';

export interface FakeKling {
  url: string;
  submits: { kind: string; body: Record<string, unknown> }[];
  /** Queries answered (the benchmark counts upstream calls). */
  queries: number;
  /** With `log: true`: when each task was queried (ms). */
  queryLog: Map<string, number[]>;
  /** Creates a task as a submit would (the benchmark seeds thousands without HTTP); its id. */
  create(kind: string, body: Record<string, unknown>): string;
  /** From this time on (ms) every unfinished task ends (succeed, or failed for "fail-me"); set by the benchmark. */
  finishAt: number;
  close(): Promise<void>;
}

export const KLING_MP4 = Buffer.from('000000186674797069736f6d0000020069736f6d', 'hex');

async function json(req: IncomingMessage): Promise<Record<string, unknown> | undefined> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const t = Buffer.concat(chunks).toString('utf8');
  try {
    return t ? (JSON.parse(t) as Record<string, unknown>) : {};
  } catch {
    return undefined;
  }
}

/** Checks a Kling API token; the error code Kling gives, or 0 when it is valid. */
function verifyJwt(header: string | undefined, accessKey: string, secretKey: string): number {
  const m = /^Bearer (.+)$/.exec(header ?? '');
  if (!m) return 1001;
  const parts = (m[1] as string).split('.');
  if (parts.length !== 3) return 1002;
  const [h, p, sig] = parts as [string, string, string];
  try {
    const head = JSON.parse(Buffer.from(h, 'base64url').toString('utf8')) as { alg?: string };
    const body = JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as {
      iss?: string;
      exp?: number;
      nbf?: number;
    };
    if (head.alg !== 'HS256' || body.iss !== accessKey) return 1002;
    const want = createHmac('sha256', secretKey).update(`${h}.${p}`).digest();
    const got = Buffer.from(sig, 'base64url');
    if (got.length !== want.length || !timingSafeEqual(got, want)) return 1002;
    const now = Date.now() / 1000;
    if (typeof body.exp !== 'number' || body.exp < now) return 1004;
    if (typeof body.nbf === 'number' && body.nbf > now + 1) return 1003;
    return 0;
  } catch {
    return 1002;
  }
}

export async function startFakeKling(opts: {
  accessKey: string;
  secretKey: string;
  stepMs?: number;
  steps?: number;
  log?: boolean;
}): Promise<FakeKling> {
  const stepMs = opts.stepMs ?? 250;
  const steps = opts.steps ?? 3;
  const tasks = new Map<string, { kind: string; body: Record<string, unknown>; at: number }>();
  const state: FakeKling = {
    url: '',
    submits: [],
    queries: 0,
    queryLog: new Map(),
    finishAt: Number.POSITIVE_INFINITY,
    create(kind, body) {
      const id = `${Date.now()}${randomBytes(6).toString('hex')}`;
      tasks.set(id, { kind, body, at: Date.now() });
      return id;
    },
    close: async () => undefined,
  };
  const rid = () => randomBytes(8).toString('hex');

  const view = (id: string) => {
    const t = tasks.get(id);
    if (!t) return undefined;
    const step = Math.floor((Date.now() - t.at) / stepMs);
    const prompt = String(t.body.prompt ?? '');
    const base = { task_id: id, task_status: 'submitted', created_at: t.at, updated_at: t.at + step * stepMs };
    const ended = Date.now() >= state.finishAt;
    if (step < 1 && !ended) return base;
    const running = !ended && (step < steps || prompt.includes('never'));
    // "never fail-me" runs until finishAt and then fails; "fail-me" alone fails at once.
    if (prompt.includes('fail-me') && !(running && prompt.includes('never')))
      return { ...base, task_status: 'failed', task_status_msg: 'content risk check failed' };
    if (running) return { ...base, task_status: 'processing' };
    return {
      ...base,
      task_status: 'succeed',
      task_status_msg: '',
      task_result: {
        videos: [{ id: `v-${id}`, url: `${state.url}/videos/${id}.mp4`, duration: String(t.body.duration ?? '5') }],
      },
    };
  };

  const server: Server = createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const mp4 = /^\/videos\/([^/]+)\.mp4$/.exec(url.pathname);
      if (req.method === 'GET' && mp4) {
        if (view(mp4[1] as string)?.task_status !== 'succeed') return send(404, { code: 1201, message: 'not found' });
        res.writeHead(200, { 'content-type': 'video/mp4' });
        return res.end(KLING_MP4);
      }
      const bad = verifyJwt(req.headers.authorization, opts.accessKey, opts.secretKey);
      if (bad) return send(401, { code: bad, message: 'Authentication failed', request_id: rid() });
      const submit = /^\/v1\/videos\/(text2video|image2video)$/.exec(url.pathname);
      if (req.method === 'POST' && submit) {
        const body = await json(req);
        if (!body) return send(400, { code: 1200, message: 'invalid request body', request_id: rid() });
        const kind = submit[1] as string;
        state.submits.push({ kind, body });
        if (kind === 'text2video' && !body.prompt)
          return send(400, { code: 1201, message: 'prompt is required', request_id: rid() });
        if (kind === 'image2video' && !body.image)
          return send(400, { code: 1201, message: 'image is required', request_id: rid() });
        if (String(body.prompt ?? '').includes('reject-me'))
          return send(400, { code: 1301, message: 'prompt triggered content risk control', request_id: rid() });
        const id = state.create(kind, body);
        return send(200, { code: 0, message: 'SUCCEED', request_id: rid(), data: view(id) });
      }
      const one = /^\/v1\/videos\/(text2video|image2video)\/([^/]+)$/.exec(url.pathname);
      if (req.method === 'GET' && one) {
        state.queries += 1;
        if (opts.log) {
          const times = state.queryLog.get(one[2] as string) ?? [];
          times.push(Date.now());
          state.queryLog.set(one[2] as string, times);
        }
        const t = tasks.get(one[2] as string);
        if (!t || t.kind !== one[1]) return send(404, { code: 1201, message: 'task not found', request_id: rid() });
        return send(200, { code: 0, message: 'SUCCEED', request_id: rid(), data: view(one[2] as string) });
      }
      send(404, { code: 1201, message: 'not found', request_id: rid() });
    })().catch((err) => send(500, { code: 5000, message: String(err), request_id: rid() }));
  });
  Object.assign(state, await listenLocal(server));
  return state;
}
