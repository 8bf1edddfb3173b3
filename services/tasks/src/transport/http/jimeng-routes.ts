/**
 * Jimeng's API on node:http as new-api serves it: `POST /jimeng/?Action=CVSync2AsyncSubmitTask&Version=2022-08-31`
 * and `POST /jimeng/?Action=CVSync2AsyncGetResult&Version=2022-08-31`, JSON bodies, `Authorization: Bearer sk-...`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { keyOf } from '../../domain/authorize.ts';
import {
  JIMENG_RESULT,
  JIMENG_SUBMIT,
  JIMENG_VERSION,
  type JimengDeps,
  JimengError,
  resultJimeng,
  submitJimeng,
} from '../../domain/jimeng.ts';
import { MjError } from '../../domain/mj-error.ts';
import { clientIp, send } from './mj-routes.ts';
import { jimengQuery, jimengResultBody, jimengSubmitBody, queryInput, readInput } from './task-input.ts';

export function jimengRoutes(d: JimengDeps, opts: { trusted: (addr: string) => boolean }) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname !== '/jimeng' && url.pathname !== '/jimeng/') return false;
    const key = keyOf(typeof req.headers.authorization === 'string' ? req.headers.authorization : undefined, undefined);
    const ip = clientIp(req, opts.trusted);
    const action = url.searchParams.get('Action') ?? '';
    try {
      const version = queryInput(url, jimengQuery).Version ?? '';
      if (req.method !== 'POST') throw new JimengError(404, `不支持的请求方法 ${req.method}`, action);
      if (!action) throw new JimengError(400, '缺少查询参数 Action', action);
      if ((action !== JIMENG_SUBMIT && action !== JIMENG_RESULT) || version !== JIMENG_VERSION) {
        throw new JimengError(404, `不支持的接口 ${action}（版本 ${version || '空'}）`, action);
      }
      const answer =
        action === JIMENG_SUBMIT
          ? await submitJimeng(d, { body: await readInput(req, jimengSubmitBody), key, ip })
          : await resultJimeng(d, { body: await readInput(req, jimengResultBody), key, ip });
      send(res, answer.status, answer.body);
    } catch (err) {
      if (err instanceof JimengError) send(res, err.status, err.body());
      else if (err instanceof MjError)
        send(res, err.status, new JimengError(err.status, err.description, action).body());
      else {
        d.onError(err, 'jimeng request failed');
        send(res, 500, new JimengError(500, '服务内部错误', action).body());
      }
    }
    return true;
  };
}
