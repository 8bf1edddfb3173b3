import type { Request, Router } from 'express';
import { type AuditedRequest, describeAction, genericAction, optionChange } from '../../../domain/audit-trail.ts';
import type { RouteDeps } from '../deps.ts';
import { ROLE } from '../middleware/auth.ts';

const plain = (v: unknown): Record<string, unknown> =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/** The value PUT /api/option/ saves, as option.ts stores it. */
const optionValue = (v: unknown) =>
  v === undefined || v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);

/**
 * Records every admin and root action through /api (domain/audit-trail.ts says which) as a log
 * entry of type 3 under the acting admin, with the client's address. Mounted before the routes:
 * the old value of an option is read before the change, and the entry is published when the route
 * answers successfully, before the answer leaves (an action the client saw succeed has its entry).
 */
export function auditTrailRoutes(api: Router, { audit, clients, options, logger }: RouteDeps): void {
  api.use(async (req, res, next) => {
    const r: AuditedRequest = { method: req.method, path: req.path, body: plain(req.body), query: plain(req.query) };
    let describe: (() => string) | undefined;
    if (r.method === 'PUT' && /^\/option\/?$/.test(r.path) && typeof r.body.key === 'string' && r.body.key) {
      const key = r.body.key;
      // Read before the route runs: the users service's value, this replica's copy if it fails.
      const before = await clients.options
        .getOption({ key })
        .then((o) => o.option?.value ?? '')
        .catch(() => options.all()[key] ?? '');
      describe = () => optionChange(key, before, optionValue(r.body.value));
    } else {
      const words = describeAction(r);
      if (words !== undefined) describe = () => words;
      // Any other change through an admin or root route (the route's guard says which, once matched).
      else if (r.method !== 'GET' && r.method !== 'HEAD' && r.method !== 'OPTIONS') {
        describe = () =>
          minRoleOf(req) >= ROLE.admin
            ? genericAction(
                r.method,
                String((req.route as { path?: string } | undefined)?.path ?? r.path),
                req.params,
                r.body,
              )
            : '';
      }
    }
    if (!describe) return next();
    const content = describe;
    const send = res.json.bind(res);
    res.json = (body: unknown) => {
      const me = req.user;
      const done = res.statusCode < 400 && (plain(body).success === true || r.method === 'GET');
      const words = me && me.role >= ROLE.admin && done ? content() : '';
      if (!me || !words) return send(body);
      record(req, me, words)
        .catch((err: unknown) => logger.error({ err, path: r.path }, 'audit entry not published'))
        .finally(() => send(body));
      return res;
    };
    next();
  });

  function record(req: Request, me: NonNullable<Request['user']>, content: string): Promise<void> {
    return audit({ userId: me.id, username: me.username, type: 3, content, actorUserId: me.id, ip: req.ip ?? '' });
  }
}

/** The least role the matched route's guard admits (route-table.ts reads it the same way). */
function minRoleOf(req: Request): number {
  const stack = (req.route as { stack?: { handle?: { minRole?: number } }[] } | undefined)?.stack ?? [];
  return stack.reduce((m, l) => Math.max(m, l.handle?.minRole ?? 0), 0);
}
