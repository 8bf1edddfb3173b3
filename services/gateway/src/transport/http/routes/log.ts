import { ok } from '@aigw/common';
import type { LogFilter } from '@aigw/proto/logs/v1/logs';
import type { Request, Router } from 'express';
import type { RouteDeps } from '../deps.ts';
import { caller, num, pageAnswer, pageQuery, str } from './wire.ts';

type Filter = Omit<Partial<LogFilter>, '$typeName' | '$unknown'>;

/** The filters of spec 02 section 7 (username and channel for admins only). */
function filterOf(req: Request, admin: boolean): Filter {
  const q = req.query;
  const n = (v: unknown) => {
    const x = num(v);
    return x !== undefined && Number.isFinite(x) ? x : 0;
  };
  const f: Filter = {
    type: n(q.type),
    tokenName: str(q.token_name)?.trim() ?? '',
    modelName: str(q.model_name)?.trim() ?? '',
    startTimestamp: n(q.start_timestamp),
    endTimestamp: n(q.end_timestamp),
    group: str(q.group)?.trim() ?? '',
  };
  if (admin) {
    f.username = str(q.username)?.trim() ?? '';
    f.channel = n(q.channel);
  } else f.userId = caller(req).id;
  return f;
}

/** A user's own view of a log: which channels served it is admin information. */
function forSelf(item: Record<string, unknown>): Record<string, unknown> {
  const { channel: _c, ip: _ip, ...rest } = item;
  try {
    const other = JSON.parse(String(rest.other || '{}')) as Record<string, unknown>;
    delete other.admin_info;
    rest.other = JSON.stringify(other);
  } catch {
    // other stays as stored
  }
  return rest;
}

/** /api/log: usage logs, their stats and cleanup (spec 02 section 7, spec 01 log cleanup). */
export function logRoutes(api: Router, { clients, guard }: RouteDeps): void {
  const { logs } = clients;

  api.get('/log/', guard.admin, async (req, res) => {
    const r = await logs.queryLogs({ filter: filterOf(req, true), page: pageQuery(req) });
    ok(res, pageAnswer(r.items, r.page));
  });

  api.get('/log/self', guard.user, async (req, res) => {
    const r = await logs.queryLogs({ filter: filterOf(req, false), page: pageQuery(req) });
    const page = pageAnswer(r.items, r.page);
    ok(res, { ...page, items: page.items.map(forSelf) });
  });

  api.get('/log/stat', guard.admin, async (req, res) => {
    const { quota, rpm, tpm } = await logs.getLogStat({ filter: filterOf(req, true) });
    ok(res, { quota, rpm, tpm });
  });

  api.get('/log/self/stat', guard.user, async (req, res) => {
    const { quota, rpm, tpm } = await logs.getLogStat({ filter: filterOf(req, false) });
    ok(res, { quota, rpm, tpm });
  });

  api.delete('/log/', guard.root, async (req, res) => {
    const r = await logs.deleteLogsBefore({ targetTimestamp: num(req.query.target_timestamp) ?? 0 });
    ok(res, r.count);
  });
}
