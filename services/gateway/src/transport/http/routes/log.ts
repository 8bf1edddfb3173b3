import { ok } from '@aigw/common';
import type { LogFilter } from '@aigw/proto/logs/v1/logs';
import type { Request, Router } from 'express';
import { z } from 'zod';
import type { RouteDeps } from '../deps.ts';
import { int, optional, optText, pageOf, pageShape, timestamp } from '../schemas.ts';
import { input, validate } from '../validate.ts';
import { caller, pageAnswer } from './wire.ts';

type Filter = Omit<Partial<LogFilter>, '$typeName' | '$unknown'>;

const filterShape = {
  type: optional(int(0, 100, '无效的日志类型')),
  token_name: optText,
  model_name: optText,
  start_timestamp: optional(timestamp),
  end_timestamp: optional(timestamp),
  group: optText,
  username: optText,
  channel: optional(int(0, undefined, '无效的渠道 ID')),
};
/** The list's filters and page (the export ignores the page). */
export const Query = validate({ query: z.object({ ...filterShape, ...pageShape }) });
const Cleanup = validate({ query: z.object({ target_timestamp: optional(timestamp) }) });

/** The filters of spec 02 section 7 (username and channel for admins only). */
export function filterOf(req: Request, admin: boolean): Filter {
  const q = input(req, Query).query;
  const f: Filter = {
    type: q.type ?? 0,
    tokenName: q.token_name?.trim() ?? '',
    modelName: q.model_name?.trim() ?? '',
    startTimestamp: q.start_timestamp ?? 0,
    endTimestamp: q.end_timestamp ?? 0,
    group: q.group?.trim() ?? '',
  };
  if (admin) {
    f.username = q.username?.trim() ?? '';
    f.channel = q.channel ?? 0;
  } else f.userId = caller(req).id;
  return f;
}

/** A user's own view of a log: which channels served it is admin information. */
export function forSelf(item: Record<string, unknown>): Record<string, unknown> {
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

  api.get('/log/', guard.admin, Query, async (req, res) => {
    const r = await logs.queryLogs({ filter: filterOf(req, true), page: pageOf(input(req, Query).query) });
    ok(res, pageAnswer(r.items, r.page));
  });

  api.get('/log/self', guard.user, Query, async (req, res) => {
    const r = await logs.queryLogs({ filter: filterOf(req, false), page: pageOf(input(req, Query).query) });
    const page = pageAnswer(r.items, r.page);
    ok(res, { ...page, items: page.items.map(forSelf) });
  });

  api.get('/log/stat', guard.admin, Query, async (req, res) => {
    const { quota, rpm, tpm } = await logs.getLogStat({ filter: filterOf(req, true) });
    ok(res, { quota, rpm, tpm });
  });

  api.get('/log/self/stat', guard.user, Query, async (req, res) => {
    const { quota, rpm, tpm } = await logs.getLogStat({ filter: filterOf(req, false) });
    ok(res, { quota, rpm, tpm });
  });

  api.delete('/log/', guard.root, Cleanup, async (req, res) => {
    const r = await logs.deleteLogsBefore({ targetTimestamp: input(req, Cleanup).query.target_timestamp ?? 0 });
    ok(res, r.count);
  });
}
