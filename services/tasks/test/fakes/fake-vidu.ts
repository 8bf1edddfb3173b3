/**
 * A fake Vidu API (platform.vidu.cn, `ent/v2`): `POST /ent/v2/text2video` and `/ent/v2/img2video`
 * with `Authorization: Token {key}` answer the task (`{task_id, state: "created", model, prompt,
 * images, duration, seed, resolution, movement_amplitude, bgm, created_at}`); `GET
 * /ent/v2/tasks/{id}/creations` moves it created -> processing -> success, one step per read,
 * with `creations: [{id, url, cover_url}]` at the end. A prompt with "fail-me" ends `failed` with
 * an `err_code`. Refusals are HTTP errors with `{code, reason, message}`. After `holdNext()` the
 * next task submitted stays `processing` until `release(id)` (a test that must see it in progress
 * does not race the poller's reads).
 */
import { randomInt } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeVidu {
  url: string;
  submits: { kind: string; body: Record<string, unknown> }[];
  holdNext(): void;
  release(id: string): void;
  close(): Promise<void>;
}

const STEPS = ['created', 'processing', 'success'];

export async function startFakeVidu(opts: { key: string }): Promise<FakeVidu> {
  const tasks = new Map<string, { body: Record<string, unknown>; reads: number; held: boolean }>();
  let holdNext = false;
  const submits: FakeVidu['submits'] = [];
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const refuse = (res: ServerResponse, status: number, reason: string, message: string) =>
    json(res, status, { code: status, reason, message, metadata: {} });
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.headers.authorization !== `Token ${opts.key}`) return refuse(res, 401, 'Unauthorized', 'invalid api key');
      const path = req.url ?? '';
      const submit = /^\/ent\/v2\/(text2video|img2video)$/.exec(path);
      if (req.method === 'POST' && submit) {
        const kind = submit[1] as string;
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
        submits.push({ kind, body });
        if (typeof body.model !== 'string') return refuse(res, 400, 'BadRequest', 'model is required');
        if (kind === 'img2video' && (!Array.isArray(body.images) || body.images.length !== 1))
          return refuse(res, 400, 'BadRequest', 'images must hold one image');
        if (kind === 'text2video' && typeof body.prompt !== 'string')
          return refuse(res, 400, 'BadRequest', 'prompt is required');
        const id = `8${Date.now()}${randomInt(100, 1000)}`;
        tasks.set(id, { body, reads: 0, held: holdNext });
        holdNext = false;
        return json(res, 200, {
          task_id: id,
          state: 'created',
          model: body.model,
          images: body.images ?? [],
          prompt: body.prompt ?? '',
          duration: body.duration,
          seed: body.seed ?? 0,
          resolution: body.resolution,
          movement_amplitude: body.movement_amplitude,
          bgm: body.bgm,
          payload: '',
          created_at: new Date().toISOString(),
        });
      }
      const m = /^\/ent\/v2\/tasks\/([^/]+)\/creations$/.exec(path);
      if (req.method === 'GET' && m) {
        const id = decodeURIComponent(m[1] ?? '');
        const t = tasks.get(id);
        if (!t) return refuse(res, 404, 'NotFound', 'task not found');
        if (!t.held || t.reads < 2) t.reads++;
        const step = STEPS[Math.min(t.reads - 1, STEPS.length - 1)] as string;
        const state = String(t.body.prompt ?? '').includes('fail-me') && step === 'success' ? 'failed' : step;
        return json(res, 200, {
          id,
          state,
          err_code: state === 'failed' ? 'AuditSubmitIllegal' : '',
          credits: state === 'success' ? 20 : 0,
          payload: '',
          creations:
            state === 'success'
              ? [
                  {
                    id: `${id}1`,
                    url: `https://prod-ss-vidu.s3.cn-northwest-1.amazonaws.com.cn/${id}.mp4`,
                    cover_url: `https://prod-ss-vidu.s3.cn-northwest-1.amazonaws.com.cn/${id}.jpeg`,
                  },
                ]
              : [],
        });
      }
      refuse(res, 404, 'NotFound', `no route ${req.method} ${path}`);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    submits,
    holdNext: () => {
      holdNext = true;
    },
    release: (id) => {
      const t = tasks.get(id);
      if (t) t.held = false;
    },
    close: () => new Promise((r) => server.close(() => r())),
  };
}
