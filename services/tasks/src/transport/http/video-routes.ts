/**
 * The OpenAI videos API on node:http: `POST /v1/videos` (create), `GET /v1/videos` (list),
 * `GET /v1/videos/{id}`, `DELETE /v1/videos/{id}`, `GET /v1/videos/{id}/content`,
 * `POST /v1/videos/{id}/remix`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { keyOf } from '../../domain/authorize.ts';
import { MjError } from '../../domain/mj-error.ts';
import type { SunoDeps } from '../../domain/suno.ts';
import {
  createVideo,
  deleteVideo,
  listVideos,
  remixVideo,
  retrieveVideo,
  VideoError,
  videoContent,
} from '../../domain/video.ts';
import { clientIp, pathId, readBody, send } from './mj-routes.ts';
import {
  parseInput,
  queryInput,
  readInput,
  videoContentQuery,
  videoCreateBody,
  videoListQuery,
  videoRemixBody,
} from './task-input.ts';

/** A multipart create: its text fields, and `input_reference` as the reference file. */
async function readForm(
  req: IncomingMessage,
  type: string,
): Promise<{ body: Record<string, unknown>; reference?: File }> {
  const raw = await readBody(req);
  let form: FormData;
  try {
    form = await new Request('http://tasks/', {
      method: 'POST',
      headers: { 'content-type': type },
      body: raw,
    }).formData();
  } catch {
    throw new VideoError(400, 'invalid_multipart', '请求体不是有效的 multipart/form-data');
  }
  const body: Record<string, unknown> = {};
  let reference: File | undefined;
  for (const [name, value] of form.entries()) {
    if (typeof value === 'string') body[name] = value;
    else if (name === 'input_reference') reference = value;
  }
  return reference ? { body, reference } : { body };
}

export function videoRoutes(d: SunoDeps, opts: { trusted: (addr: string) => boolean }) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname !== '/v1/videos' && !url.pathname.startsWith('/v1/videos/')) return false;
    const key = keyOf(typeof req.headers.authorization === 'string' ? req.headers.authorization : undefined, undefined);
    const ip = clientIp(req, opts.trusted);
    const one = /^\/v1\/videos\/([^/]+)$/.exec(url.pathname);
    const content = /^\/v1\/videos\/([^/]+)\/content$/.exec(url.pathname);
    const remix = /^\/v1\/videos\/([^/]+)\/remix$/.exec(url.pathname);
    try {
      if (req.method === 'POST' && url.pathname === '/v1/videos') {
        const type = String(req.headers['content-type'] ?? '').toLowerCase();
        let a: { status: number; body: unknown };
        if (type.includes('application/json')) {
          a = await createVideo(d, { body: await readInput(req, videoCreateBody), key, ip });
        } else if (type.startsWith('multipart/form-data')) {
          // What OpenAI's SDKs send (always, a reference image or not).
          const form = await readForm(req, type);
          a = await createVideo(d, { ...form, body: parseInput(videoCreateBody, form.body), key, ip });
        } else {
          throw new VideoError(415, 'unsupported_media_type', '请以 application/json 或 multipart/form-data 提交');
        }
        send(res, a.status, a.body);
      } else if (req.method === 'GET' && url.pathname === '/v1/videos') {
        const q = queryInput(url, videoListQuery);
        const a = await listVideos(d, {
          key,
          ip,
          limit: q.limit ?? null,
          after: q.after ?? null,
          order: q.order ?? null,
        });
        send(res, a.status, a.body);
      } else if (req.method === 'GET' && one) {
        const a = await retrieveVideo(d, key, ip, pathId(one[1] as string));
        send(res, a.status, a.body);
      } else if (req.method === 'DELETE' && one) {
        const a = await deleteVideo(d, { id: pathId(one[1] as string), key, ip });
        send(res, a.status, a.body);
      } else if (req.method === 'POST' && remix) {
        const type = String(req.headers['content-type'] ?? '').toLowerCase();
        const body = type.startsWith('multipart/form-data')
          ? parseInput(videoRemixBody, (await readForm(req, type)).body)
          : await readInput(req, videoRemixBody);
        const a = await remixVideo(d, { id: pathId(remix[1] as string), body, key, ip });
        send(res, a.status, a.body);
      } else if (req.method === 'GET' && content) {
        const up = await videoContent(
          d,
          key,
          ip,
          pathId(content[1] as string),
          queryInput(url, videoContentQuery).variant ?? '',
        );
        if (!up.ok || !up.body) throw new VideoError(502, 'upstream_error', '上游视频获取失败');
        res.writeHead(200, { 'content-type': up.headers.get('content-type') ?? 'video/mp4' });
        Readable.fromWeb(up.body as import('node:stream/web').ReadableStream).pipe(res);
      } else throw new VideoError(404, 'not_found', '接口不存在');
    } catch (err) {
      if (err instanceof VideoError) send(res, err.status, err.body());
      else if (err instanceof MjError)
        send(res, err.status, new VideoError(err.status, 'invalid_request', err.description).body());
      else {
        d.onError(err, 'video request failed');
        send(res, 500, new VideoError(500, 'internal_error', '服务内部错误').body());
      }
    }
    return true;
  };
}
