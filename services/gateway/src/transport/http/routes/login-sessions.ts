import { ok } from '@aigw/common';
import { invalid } from '@aigw/common/errors';
import type { Router } from 'express';
import { z } from 'zod';
import type { RouteDeps } from '../deps.ts';
import { body } from '../schemas.ts';
import { input, validate } from '../validate.ts';
import { caller } from './wire.ts';

const NoInput = validate({ body: body({}) });
const BySid = validate({ params: z.object({ sid: z.string().regex(/^[\w-]{1,64}$/, '无效的会话 ID') }) });

/**
 * The caller's login sessions (new-api's /api/user/self/sessions): list them (origin, creation,
 * last activity, the current one marked), end one, or end all but the current one. An ended
 * session's cookie is refused (401) on its next request.
 */
export function loginSessionRoutes(api: Router, { guard, sessions }: RouteDeps): void {
  api.get('/user/self/sessions', guard.user, async (req, res) => {
    res.set('Cache-Control', 'no-store');
    ok(res, await sessions.list(caller(req).id, req.sessionId));
  });

  api.post('/user/self/sessions/revoke-others', guard.user, NoInput, async (req, res) => {
    const count = await sessions.revokeOthers(caller(req).id, req.sessionId);
    ok(res, { revoked_count: count });
  });

  api.delete('/user/self/sessions/:sid', guard.user, BySid, async (req, res) => {
    const { sid } = input(req, BySid).params;
    if (!(await sessions.revoke(caller(req).id, sid))) throw invalid('会话不存在或已失效');
    const current = req.sessionId !== undefined && sessions.publicId(req.sessionId) === sid;
    if (current) res.clearCookie('session', { path: '/' });
    ok(res, { revoked_sid: sid, current });
  });
}
