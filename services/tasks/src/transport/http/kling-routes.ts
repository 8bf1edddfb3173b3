/** Kling's API on node:http: `POST /kling/v1/videos/{text2video|image2video}`, `GET /kling/v1/videos/{kind}/{task_id}`. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { keyOf } from '../../domain/authorize.ts';
import { KlingError, type KlingKind, queryKling, submitKling } from '../../domain/kling.ts';
import { MjError } from '../../domain/mj-error.ts';
import type { SunoDeps } from '../../domain/suno.ts';
import { clientIp, pathId, send } from './mj-routes.ts';
import { klingSubmitBody, readInput } from './task-input.ts';

export function klingRoutes(d: SunoDeps, opts: { trusted: (addr: string) => boolean }) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (!url.pathname.startsWith('/kling/')) return false;
    const key = keyOf(typeof req.headers.authorization === 'string' ? req.headers.authorization : undefined, undefined);
    const ip = clientIp(req, opts.trusted);
    const submit = /^\/kling\/v1\/videos\/(text2video|image2video)$/.exec(url.pathname);
    const one = /^\/kling\/v1\/videos\/(text2video|image2video)\/([^/]+)$/.exec(url.pathname);
    try {
      let answer: { status: number; body: unknown };
      if (req.method === 'POST' && submit) {
        answer = await submitKling(d, {
          kind: submit[1] as KlingKind,
          body: await readInput(req, klingSubmitBody),
          key,
          ip,
        });
      } else if (req.method === 'GET' && one) {
        const id = pathId(one[2] as string);
        answer = await queryKling(d, { kind: one[1] as KlingKind, id, key, ip });
      } else throw new KlingError(404, '接口不存在');
      send(res, answer.status, answer.body);
    } catch (err) {
      if (err instanceof KlingError) send(res, err.status, err.body());
      else if (err instanceof MjError) send(res, err.status, new KlingError(err.status, err.description).body());
      else {
        d.onError(err, 'kling request failed');
        send(res, 500, new KlingError(500, '服务内部错误').body());
      }
    }
    return true;
  };
}
