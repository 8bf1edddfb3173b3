/** The Suno task API on node:http: `/suno/submit/{music|lyrics}`, `/suno/fetch/{id}`, `POST /suno/fetch`. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { keyOf } from '../../domain/authorize.ts';
import { MjError } from '../../domain/mj-error.ts';
import { fetchSuno, type SunoDeps, SunoError, submitSuno } from '../../domain/suno.ts';
import { clientIp, pathId, send } from './mj-routes.ts';
import { readInput, sunoFetchBody, sunoSubmitBody } from './task-input.ts';

export function sunoRoutes(d: SunoDeps, opts: { trusted: (addr: string) => boolean }) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (!url.pathname.startsWith('/suno/')) return false;
    const key = keyOf(typeof req.headers.authorization === 'string' ? req.headers.authorization : undefined, undefined);
    const ip = clientIp(req, opts.trusted);
    try {
      const submit = /^\/suno\/submit\/(music|lyrics)$/.exec(url.pathname);
      const one = /^\/suno\/fetch\/([^/]+)$/.exec(url.pathname);
      let answer: { status: number; body: unknown };
      if (req.method === 'POST' && submit) {
        const action = submit[1] === 'music' ? 'MUSIC' : 'LYRICS';
        answer = await submitSuno(d, { action, body: await readInput(req, sunoSubmitBody), key, ip });
      } else if (req.method === 'GET' && one) {
        answer = await fetchSuno(d, { ids: [pathId(one[1] as string)], one: true, key, ip });
      } else if (req.method === 'POST' && url.pathname === '/suno/fetch') {
        const ids = ((await readInput(req, sunoFetchBody)).ids ?? []).map(String);
        answer = await fetchSuno(d, { ids, one: false, key, ip });
      } else answer = { status: 404, body: { code: 'not_found', message: '接口不存在', data: null } };
      send(res, answer.status, answer.body);
    } catch (err) {
      if (err instanceof SunoError) send(res, err.status, { code: err.code, message: err.message, data: null });
      else if (err instanceof MjError)
        send(res, err.status, { code: 'invalid_request', message: err.description, data: null });
      else {
        d.onError(err, 'suno request failed');
        send(res, 500, { code: 'internal_error', message: '服务内部错误', data: null });
      }
    }
    return true;
  };
}
