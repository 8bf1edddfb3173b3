import { ok } from '@aigw/common';
import { invalid } from '@aigw/common/errors';
import type { NextFunction, Request, RequestHandler, Response, Router } from 'express';
import { z } from 'zod';
import type { RouteDeps } from '../deps.ts';
import { ROLE } from '../middleware/auth.ts';
import { body, flag, id, int, int32, list, optional, optText, pageOf, pageShape, pathId, text } from '../schemas.ts';
import { input, validate } from '../validate.ts';
import { channelTypesWire } from './channel-types.ts';
import { caller, defined, pageAnswer, snake } from './wire.ts';

/** weight travels as uint32: refuse what it cannot carry here, with the service's message. */
function weightOf(w: number | undefined): number | undefined {
  if (w !== undefined && !(w >= 0 && w <= 0xffffffff)) throw invalid('权重必须是不小于 0 的整数');
  return w;
}

const MASK = '********';

/**
 * A channel key as admins see it: the first and last 4 characters around a fixed run of
 * asterisks; a key of 12 characters or fewer shows none of itself. Only root reads keys in full.
 */
export function maskKey(key: string): string {
  if (!key) return '';
  return key.length > 12 ? `${key.slice(0, 4)}${MASK}${key.slice(-4)}` : MASK;
}

/** An override field: JSON text, or the object itself (sent back as its text). */
const jsonText = z
  .union([z.string(), z.record(z.string(), z.unknown()).transform((o) => JSON.stringify(o))], {
    error: '必须是 JSON 文本',
  })
  .nullish()
  .transform((v) => v ?? undefined);
const num = optional(int());
const i32 = optional(int32());
/** Channel fields of a create or update body; models and groups as arrays or comma lists. */
const fields = {
  name: optText,
  type: i32,
  key: optText,
  openai_organization: optText,
  max_input_tokens: i32,
  base_url: optText,
  other: optText,
  model_mapping: optText,
  status_code_mapping: optText,
  models: list.nullish(),
  group: list.nullish(),
  groups: list.nullish(),
  auto_ban: i32,
  test_model: optText,
  status: i32,
  priority: num,
  weight: num,
  tag: optText,
  multi_key_mode: optText,
  param_override: jsonText,
  header_override: jsonText,
  setting: jsonText,
  settings: jsonText,
};
const channelBody = body(fields);
type ChannelBody = z.output<typeof channelBody>;

function channelFields(b: ChannelBody) {
  return defined({
    name: b.name,
    type: b.type,
    key: b.key,
    openaiOrganization: b.openai_organization,
    maxInputTokens: b.max_input_tokens,
    baseUrl: b.base_url,
    other: b.other,
    modelMapping: b.model_mapping,
    statusCodeMapping: b.status_code_mapping,
    models: b.models ?? undefined,
    group: b.groups ?? b.group ?? undefined,
    autoBan: b.auto_ban,
    testModel: b.test_model,
    status: b.status,
    priority: b.priority,
    weight: weightOf(b.weight),
    tag: b.tag,
    multiKeyMode: b.multi_key_mode,
    paramOverride: b.param_override,
    headerOverride: b.header_override,
    setting: b.setting,
    settings: b.settings,
  });
}

const List = validate({ query: z.object({ ...pageShape, id_sort: optional(flag) }) });
const Search = validate({
  query: z.object({ keyword: optText, group: optText, model: optText, id_sort: optional(flag), ...pageShape }),
});
const ById = validate({ params: pathId });
const TestOne = validate({ params: pathId, query: z.object({ model: optText }) });
const FetchModels = validate({ body: body({ type: i32, base_url: optText, key: optText }) });
const Create = validate({
  body: z.union([body({ mode: optText, channel: channelBody }), body({ ...fields, batch: optional(flag) })]),
});
const Update = validate({ body: body({ ...fields, id: id() }) });
const BatchDelete = validate({ body: body({ ids: z.array(id()).optional() }) });
const ManageKeys = validate({
  body: body({
    channel_id: id('渠道不存在'),
    action: text,
    key_index: optional(int(0, 100_000, '密钥索引超出范围')),
    page: i32,
    page_size: i32,
    status: optional(int(1, 3, '无效的密钥状态')),
  }),
});

/** Only numeric ids reach `:id` handlers (so /channel/test and friends stay distinct). */
const numericId = (req: Request, _res: Response, next: NextFunction) => {
  if (/^\d+$/.test(String(req.params.id))) next();
  else next('route');
};

/** GET /api/channel/:id: root reads the key in full, and each such read is logged (type 3); admins get it masked. */
function readChannel({ clients, audit }: RouteDeps): RequestHandler {
  return async (req, res) => {
    const { id } = input(req, ById).params;
    const r = await clients.channels.getChannel({ id, includeKey: true });
    if (!r.channel) return ok(res, null);
    const me = caller(req);
    if (me.role >= ROLE.root) {
      // Recorded before the key leaves: no full read without its log entry.
      await audit({
        userId: me.id,
        username: me.username,
        type: 3,
        content: `查看渠道 #${id}（${r.channel.name}）的完整密钥`,
        actorUserId: me.id,
        ip: req.ip ?? '',
      });
      return ok(res, snake(r.channel));
    }
    ok(res, snake({ ...r.channel, key: maskKey(r.channel.key) }));
  };
}

/** POST /api/channel/: one channel, or one per key line (batch), from a bare or a wrapped body. */
function createChannel({ clients }: RouteDeps): RequestHandler {
  return async (req, res) => {
    const raw = input(req, Create).body;
    const wrapped = 'channel' in raw ? raw : undefined;
    const fields = channelFields(wrapped ? wrapped.channel : (raw as ChannelBody));
    // A masked key (an admin copying a channel) would be stored as the upstream key: refused.
    if (fields.key?.includes(MASK)) throw invalid('密钥已隐藏，请重新填写渠道密钥');
    const multiLine = (fields.key ?? '').trim().includes('\n');
    const batch = wrapped
      ? wrapped.mode === 'batch'
      : ((raw as { batch?: boolean }).batch ?? (multiLine && fields.type !== 41));
    // Channel is a proto3 message: absent numbers arrive as 0, so the form's defaults are set here.
    const r = await clients.channels.createChannels({ channel: { autoBan: 1, ...fields }, batch });
    ok(res, r.ids, r.ids.length > 1 ? `已创建 ${r.ids.length} 个渠道` : '渠道创建成功！');
  };
}

/** PUT /api/channel/: the changes of an edit; the masked form of the stored key means "keep". */
function updateChannel({ clients }: RouteDeps): RequestHandler {
  return async (req, res) => {
    const b = input(req, Update).body;
    const changes = channelFields(b);
    // The edit form sends back the key it was shown: the masked form of the stored key means "keep".
    if (changes.key?.includes(MASK)) {
      const current = await clients.channels.getChannel({ id: b.id, includeKey: true });
      if (current.channel && changes.key === maskKey(current.channel.key)) delete changes.key;
    }
    const r = await clients.channels.updateChannel({ id: b.id, ...changes });
    ok(res, r.channel ? snake(r.channel) : null, '渠道更新成功！');
  };
}

/** new-api's multi-key management: get_key_status answers the page of keys (previews only). */
function manageKeys({ clients }: RouteDeps): RequestHandler {
  return async (req, res) => {
    const b = input(req, ManageKeys).body;
    const r = await clients.channels.manageMultiKeys({
      channelId: b.channel_id,
      action: b.action,
      keyIndex: b.key_index,
      page: b.page ?? 0,
      pageSize: b.page_size ?? 0,
      status: b.status,
    });
    if (b.action === 'get_key_status') {
      const { keys, total, page, pageSize, totalPages, enabledCount, manualDisabledCount, autoDisabledCount } = r;
      return ok(
        res,
        snake({
          keys: keys.map((k) => snake(k)),
          total,
          page,
          pageSize,
          totalPages,
          enabledCount,
          manualDisabledCount,
          autoDisabledCount,
        }),
      );
    }
    if (b.action === 'delete_disabled_keys') return ok(res, r.deletedCount, r.message);
    ok(res, undefined, r.message);
  };
}

/** Listing and searching channels, and the channel-type catalogue. */
function channelListRoutes(api: Router, { clients, guard }: RouteDeps): void {
  const { channels } = clients;
  api.get('/channel/', guard.admin, List, async (req, res) => {
    const q = input(req, List).query;
    const r = await channels.listChannels({ page: pageOf(q), idSort: q.id_sort ?? false });
    ok(res, pageAnswer(r.items, r.page));
  });

  // The channel-type catalogue (services/common/src/channel-catalogue.ts): the console's type
  // picker, list tags and per-type form fields.
  api.get('/channel/types', guard.admin, (_req, res) => {
    ok(res, channelTypesWire());
  });

  api.get('/channel/search', guard.admin, Search, async (req, res) => {
    const q = input(req, Search).query;
    const r = await channels.searchChannels({
      keyword: q.keyword ?? '',
      group: q.group ?? '',
      model: q.model ?? '',
      idSort: q.id_sort ?? false,
      page: pageOf(q),
    });
    ok(res, pageAnswer(r.items, r.page));
  });
}

/** What asks the upstreams: channel tests, balances and the upstream's model list. */
function channelUpstreamRoutes(api: Router, { clients, guard }: RouteDeps): void {
  const { channels } = clients;
  api.get('/channel/test', guard.admin, async (_req, res) => {
    const r = await channels.testAllChannels({});
    ok(res, r.count, `已开始测试 ${r.count} 个渠道，请稍后刷新查看结果`);
  });

  api.get('/channel/test/:id', numericId, guard.admin, TestOne, async (req, res) => {
    const { params, query } = input(req, TestOne);
    const r = await channels.testChannel({ id: params.id, model: query.model ?? '' }, { deadlineMs: 90_000 });
    const time = Math.round(r.timeMs) / 1000;
    res.json({ success: r.success, message: r.message, time, data: { time } });
  });

  api.get('/channel/update_balance', guard.admin, async (_req, res) => {
    const r = await channels.updateAllChannelBalances({}, { deadlineMs: 120_000 });
    ok(res, r.count, `已更新 ${r.count} 个渠道的余额`);
  });

  api.get('/channel/update_balance/:id', numericId, guard.admin, ById, async (req, res) => {
    const r = await channels.updateChannelBalance({ id: input(req, ById).params.id }, { deadlineMs: 30_000 });
    res.json({ success: true, message: '', balance: r.balance, data: { balance: r.balance } });
  });

  api.get('/channel/fetch_models/:id', numericId, guard.admin, ById, async (req, res) => {
    const { id } = input(req, ById).params;
    ok(res, (await channels.fetchUpstreamModels({ id }, { deadlineMs: 30_000 })).models);
  });

  api.post('/channel/fetch_models', guard.admin, FetchModels, async (req, res) => {
    const b = input(req, FetchModels).body;
    const r = await channels.fetchUpstreamModels(
      { type: b.type ?? 1, baseUrl: b.base_url ?? '', key: b.key ?? '' },
      { deadlineMs: 30_000 },
    );
    ok(res, r.models);
  });
}

/** One channel read, created, edited or deleted; keys of multi-key channels; the abilities' repair. */
function channelEditRoutes(api: Router, deps: RouteDeps): void {
  const { clients, guard } = deps;
  const { channels } = clients;
  api.get('/channel/:id', numericId, guard.admin, ById, readChannel(deps));
  api.post('/channel/', guard.admin, Create, createChannel(deps));
  api.put('/channel/', guard.admin, Update, updateChannel(deps));

  api.delete('/channel/disabled', guard.admin, async (_req, res) => {
    ok(res, (await channels.deleteDisabledChannels({})).count);
  });

  api.delete('/channel/:id', numericId, guard.admin, ById, async (req, res) => {
    await channels.deleteChannel({ id: input(req, ById).params.id });
    ok(res);
  });

  api.post('/channel/batch', guard.admin, BatchDelete, async (req, res) => {
    const { ids } = input(req, BatchDelete).body;
    if (!ids || ids.length === 0) throw invalid('请先选择要删除的通道！');
    const r = await channels.batchDeleteChannels({ ids });
    ok(res, r.count);
  });

  api.post('/channel/multi_key/manage', guard.admin, ManageKeys, manageKeys(deps));

  api.post('/channel/fix', guard.admin, async (_req, res) => {
    const r = await channels.fixAbilities({});
    ok(res, r.count, `已修复 ${r.count} 个渠道${r.failed > 0 ? `，${r.failed} 个失败` : ''}`);
  });
}

/** /api/channel (admin): channels, tests, balances, upstream models. */
export function channelRoutes(api: Router, deps: RouteDeps): void {
  channelListRoutes(api, deps);
  channelUpstreamRoutes(api, deps);
  channelEditRoutes(api, deps);
}
