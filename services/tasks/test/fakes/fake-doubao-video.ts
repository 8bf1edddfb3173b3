/**
 * A fake VolcEngine Ark content generation tasks API (Doubao Seedance video):
 * `POST /api/v3/contents/generations/tasks` with the bearer key and `{model, content: [{type:
 * text}, {type: image_url}...], duration, ratio...}` answers `{id: "cgt-..."}`; `GET
 * /api/v3/contents/generations/tasks/{id}` moves the task queued -> running -> succeeded, one step
 * per read, with `content.video_url`, `duration` and the usage at the end. A prompt with "fail-me"
 * ends `failed` with Ark's `error: {code, message}`. Refusals are HTTP errors with `{error: {code,
 * message, type}}` (401 AuthenticationError, 400 InvalidParameter, 404 ResourceNotFound).
 */
import { randomBytes } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeDoubaoVideo {
  url: string;
  creates: Record<string, unknown>[];
  close(): Promise<void>;
}

const STEPS = ['queued', 'running', 'succeeded'];

export async function startFakeDoubaoVideo(opts: { key: string }): Promise<FakeDoubaoVideo> {
  const tasks = new Map<string, { body: Record<string, unknown>; reads: number; created: number }>();
  const creates: Record<string, unknown>[] = [];
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const refuse = (res: ServerResponse, status: number, code: string, message: string) =>
    json(res, status, { error: { code, message, param: '', type: status === 401 ? 'Unauthorized' : 'BadRequest' } });
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.headers.authorization !== `Bearer ${opts.key}`)
        return refuse(res, 401, 'AuthenticationError', 'the API key or AK/SK in the request is missing or invalid');
      const path = req.url ?? '';
      if (req.method === 'POST' && path === '/api/v3/contents/generations/tasks') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
        creates.push(body);
        const content = body.content;
        if (typeof body.model !== 'string' || !Array.isArray(content) || content.length === 0)
          return refuse(res, 400, 'MissingParameter', 'the request is missing model or content');
        const bad = content.find((c) => {
          const item = c as { type?: unknown; text?: unknown; image_url?: { url?: unknown } };
          if (item.type === 'text') return typeof item.text !== 'string';
          if (item.type === 'image_url') return typeof item.image_url?.url !== 'string';
          return true;
        });
        if (bad)
          return refuse(res, 400, 'InvalidParameter', 'the parameter `content` specified in the request is not valid');
        const id = `cgt-${new Date().toISOString().slice(0, 10).replace(/-/g, '')}${randomBytes(6).toString('hex')}`;
        tasks.set(id, { body, reads: 0, created: Math.floor(Date.now() / 1000) });
        return json(res, 200, { id });
      }
      const m = /^\/api\/v3\/contents\/generations\/tasks\/([^/?]+)$/.exec(path);
      if (req.method === 'GET' && m) {
        const t = tasks.get(decodeURIComponent(m[1] ?? ''));
        if (!t) return refuse(res, 404, 'ResourceNotFound', 'the specified task is not found');
        t.reads++;
        const text = (t.body.content as { type: string; text?: string }[]).find((c) => c.type === 'text')?.text ?? '';
        const failing = text.includes('fail-me');
        const step = STEPS[Math.min(t.reads - 1, STEPS.length - 1)] as string;
        const status = failing && step === 'succeeded' ? 'failed' : step;
        const id = decodeURIComponent(m[1] ?? '');
        return json(res, 200, {
          id,
          model: t.body.model,
          status,
          ...(status === 'succeeded'
            ? {
                content: { video_url: `https://ark-content-generation.tos-cn-beijing.volces.com/${id}.mp4` },
                usage: { completion_tokens: 108900, total_tokens: 108900 },
              }
            : {}),
          ...(status === 'failed'
            ? {
                error: {
                  code: 'OutputVideoSensitiveContentDetected',
                  message: 'The request failed because the output video may contain sensitive information.',
                },
              }
            : {}),
          seed: 10,
          resolution: '720p',
          ratio: t.body.ratio ?? '16:9',
          duration: t.body.duration ?? 5,
          framespersecond: 24,
          created_at: t.created,
          updated_at: Math.floor(Date.now() / 1000),
        });
      }
      refuse(res, 404, 'NotFound', `no route ${req.method} ${path}`);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    creates,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
