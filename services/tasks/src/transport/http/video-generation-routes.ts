/** new-api's unified video API on node:http: `POST /v1/video/generations`, `GET /v1/video/generations/{task_id}`. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { keyOf } from '../../domain/authorize.ts';
import type { JimengDeps } from '../../domain/jimeng.ts';
import { MjError } from '../../domain/mj-error.ts';
import { VideoError } from '../../domain/video.ts';
import { getGeneration, submitGeneration } from '../../domain/video-generations.ts';
import { clientIp, pathId, send } from './mj-routes.ts';
import { generationBody, readInput } from './task-input.ts';

const BASE = '/v1/video/generations';

export function videoGenerationRoutes(d: JimengDeps, opts: { trusted: (addr: string) => boolean }) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname !== BASE && !url.pathname.startsWith(`${BASE}/`)) return false;
    const key = keyOf(typeof req.headers.authorization === 'string' ? req.headers.authorization : undefined, undefined);
    const ip = clientIp(req, opts.trusted);
    const one = /^\/v1\/video\/generations\/([^/]+)$/.exec(url.pathname);
    try {
      let answer: { status: number; body: unknown };
      if (req.method === 'POST' && url.pathname === BASE) {
        if (!String(req.headers['content-type'] ?? '').includes('application/json')) {
          throw new VideoError(415, 'unsupported_media_type', '请以 application/json 提交');
        }
        answer = await submitGeneration(d, { body: await readInput(req, generationBody), key, ip });
      } else if (req.method === 'GET' && one) {
        answer = await getGeneration(d, { id: pathId(one[1] as string), key, ip });
      } else throw new VideoError(404, 'not_found', '接口不存在');
      send(res, answer.status, answer.body);
    } catch (err) {
      if (err instanceof VideoError) send(res, err.status, err.body());
      else if (err instanceof MjError)
        send(res, err.status, new VideoError(err.status, 'invalid_request', err.description).body());
      else {
        d.onError(err, 'video generation request failed');
        send(res, 500, new VideoError(500, 'internal_error', '服务内部错误').body());
      }
    }
    return true;
  };
}
