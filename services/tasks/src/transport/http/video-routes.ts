/** The OpenAI videos API on node:http: `POST /v1/videos`, `GET /v1/videos/{id}`, `GET /v1/videos/{id}/content`. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { keyOf } from '../../domain/authorize.ts';
import { MjError } from '../../domain/mj-error.ts';
import type { SunoDeps } from '../../domain/suno.ts';
import { createVideo, retrieveVideo, VideoError, videoContent } from '../../domain/video.ts';
import { clientIp, readJson, send } from './mj-routes.ts';

export function videoRoutes(d: SunoDeps, opts: { trustProxy: boolean }) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname !== '/v1/videos' && !url.pathname.startsWith('/v1/videos/')) return false;
    const key = keyOf(typeof req.headers.authorization === 'string' ? req.headers.authorization : undefined, undefined);
    const ip = clientIp(req, opts.trustProxy);
    const one = /^\/v1\/videos\/([^/]+)$/.exec(url.pathname);
    const content = /^\/v1\/videos\/([^/]+)\/content$/.exec(url.pathname);
    try {
      if (req.method === 'POST' && url.pathname === '/v1/videos') {
        if (!String(req.headers['content-type'] ?? '').includes('application/json')) {
          throw new VideoError(
            415,
            'unsupported_media_type',
            '请以 application/json 提交（暂不支持 multipart 参考图）',
          );
        }
        const a = await createVideo(d, { body: await readJson(req), key, ip });
        send(res, a.status, a.body);
      } else if (req.method === 'GET' && one) {
        const a = await retrieveVideo(d, key, ip, decodeURIComponent(one[1] as string));
        send(res, a.status, a.body);
      } else if (req.method === 'GET' && content) {
        const up = await videoContent(
          d,
          key,
          ip,
          decodeURIComponent(content[1] as string),
          url.searchParams.get('variant') ?? '',
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
