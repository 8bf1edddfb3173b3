/**
 * A fake OpenAI videos API: `POST /v1/videos` answers a video object (`video_...`, queued),
 * `GET /v1/videos/{id}` moves it through in_progress (progress grows) to completed, and
 * `GET /v1/videos/{id}/content` serves MP4 bytes once completed. Prompts with "fail-me" fail
 * with an error object; "reject-me" is refused at create (400). Create takes JSON or, as OpenAI's
 * SDKs send it, multipart/form-data whose optional `input_reference` file is recorded as
 * `{name, type, bytes}`. `POST /v1/videos/{id}/remix` makes a new video of a completed one with a
 * new prompt (`remixed_from_video_id`); `DELETE /v1/videos/{id}` deletes it.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { listenLocal } from './listen.ts';

export interface FakeVideo {
  url: string;
  creates: Record<string, unknown>[];
  /** Remixes asked: the source video and the body. */
  remixes: { from: string; body: Record<string, unknown> }[];
  /** Videos deleted. */
  deletes: string[];
  close(): Promise<void>;
}

export const FAKE_MP4 = Buffer.from('00000018667479706d703432000000006d703432', 'hex');

/** The create body: JSON, or multipart fields with the reference file as `{name, type, bytes}`. */
async function createBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const raw = Buffer.concat(chunks);
  const type = String(req.headers['content-type'] ?? '');
  if (type.startsWith('multipart/form-data')) {
    const form = await new Request('http://fake/', {
      method: 'POST',
      headers: { 'content-type': type },
      body: raw,
    }).formData();
    const out: Record<string, unknown> = { multipart: true };
    for (const [name, value] of form.entries()) {
      out[name] =
        typeof value === 'string'
          ? value
          : { name: value.name, type: value.type, bytes: Buffer.from(await value.arrayBuffer()) };
    }
    return out;
  }
  const t = raw.toString('utf8');
  return t ? (JSON.parse(t) as Record<string, unknown>) : {};
}

/** A video the fake keeps: its create body, when it was made, and the video it remixes. */
interface StoredVideo {
  body: Record<string, unknown>;
  at: number;
  from?: string;
}

/** A video object as GET /v1/videos/{id} shows it now: queued, in_progress, then completed or failed. */
function videoView(id: string, v: StoredVideo, clock: { stepMs: number; steps: number }) {
  const step = Math.floor((Date.now() - v.at) / clock.stepMs);
  const base = {
    id,
    object: 'video',
    model: v.body.model,
    status: 'queued',
    progress: 0,
    created_at: Math.floor(v.at / 1000),
    completed_at: null as number | null,
    expires_at: null as number | null,
    seconds: String(v.body.seconds ?? '4'),
    size: String(v.body.size ?? '720x1280'),
    remixed_from_video_id: v.from ?? null,
    error: null as unknown,
  };
  if (step < 1) return base;
  if (String(v.body.prompt).includes('fail-me')) {
    return { ...base, status: 'failed', error: { code: 'moderation_blocked', message: 'blocked by moderation' } };
  }
  if (step < clock.steps) return { ...base, status: 'in_progress', progress: Math.round((100 * step) / clock.steps) };
  const done = Math.floor((v.at + clock.steps * clock.stepMs) / 1000);
  return { ...base, status: 'completed', progress: 100, completed_at: done, expires_at: done + 3600 };
}

export async function startFakeVideo(opts: { key: string; stepMs?: number; steps?: number }): Promise<FakeVideo> {
  const stepMs = opts.stepMs ?? 250;
  const steps = opts.steps ?? 3;
  const videos = new Map<string, StoredVideo>();
  const state: FakeVideo = { url: '', creates: [], remixes: [], deletes: [], close: async () => undefined };

  const view = (id: string) => {
    const v = videos.get(id);
    return v ? videoView(id, v, { stepMs, steps }) : undefined;
  };

  const server: Server = createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    void (async () => {
      if (req.headers.authorization !== `Bearer ${opts.key}`) {
        return send(401, {
          error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' },
        });
      }
      const url = new URL(req.url ?? '/', 'http://x');
      if (req.method === 'POST' && url.pathname === '/v1/videos') {
        const body = await createBody(req);
        state.creates.push(body);
        if (String(body.prompt).includes('reject-me')) {
          return send(400, {
            error: { message: 'prompt rejected', type: 'invalid_request_error', code: 'moderation_blocked' },
          });
        }
        const id = `video_${randomBytes(12).toString('hex')}`;
        videos.set(id, { body, at: Date.now() });
        return send(200, view(id));
      }
      const remix = /^\/v1\/videos\/([^/]+)\/remix$/.exec(url.pathname);
      if (req.method === 'POST' && remix) {
        const from = remix[1] as string;
        const body = await createBody(req);
        state.remixes.push({ from, body });
        const source = videos.get(from);
        if (!source) return send(404, { error: { message: 'not found', type: 'invalid_request_error' } });
        if (view(from)?.status !== 'completed') {
          return send(400, { error: { message: 'video is not completed', type: 'invalid_request_error' } });
        }
        const id = `video_${randomBytes(12).toString('hex')}`;
        videos.set(id, { body: { ...source.body, prompt: body.prompt }, at: Date.now(), from });
        return send(200, view(id));
      }
      const content = /^\/v1\/videos\/([^/]+)\/content$/.exec(url.pathname);
      if (req.method === 'GET' && content) {
        const v = view(content[1] as string);
        if (v?.status !== 'completed')
          return send(404, { error: { message: 'not ready', type: 'invalid_request_error' } });
        res.writeHead(200, { 'content-type': 'video/mp4' });
        res.end(FAKE_MP4);
        return;
      }
      const one = /^\/v1\/videos\/([^/]+)$/.exec(url.pathname);
      if (req.method === 'DELETE' && one) {
        const id = one[1] as string;
        if (!videos.delete(id)) return send(404, { error: { message: 'not found', type: 'invalid_request_error' } });
        state.deletes.push(id);
        return send(200, { id, object: 'video.deleted', deleted: true });
      }
      if (req.method === 'GET' && one) {
        const v = view(one[1] as string);
        return v ? send(200, v) : send(404, { error: { message: 'not found', type: 'invalid_request_error' } });
      }
      send(404, { error: { message: 'not found', type: 'invalid_request_error' } });
    })().catch((err) => send(500, { error: { message: String(err) } }));
  });
  Object.assign(state, await listenLocal(server));
  return state;
}
