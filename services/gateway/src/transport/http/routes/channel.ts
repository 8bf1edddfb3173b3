import { ok } from '@aigw/common';
import { invalid } from '@aigw/common/errors';
import type { NextFunction, Request, Response, Router } from 'express';
import type { RouteDeps } from '../deps.ts';
import { body, bool, defined, idParam, num, pageAnswer, pageQuery, snake, str } from './wire.ts';

const list = (v: unknown): string | undefined => (Array.isArray(v) ? v.map(String).join(',') : str(v));

/** weight travels as uint32: refuse what it cannot carry here, with the service's message. */
function weightOf(v: unknown): number | undefined {
  const w = num(v);
  if (w !== undefined && !(Number.isInteger(w) && w >= 0 && w <= 0xffffffff))
    throw invalid('权重必须是不小于 0 的整数');
  return w;
}

/** Channel fields of a create or update body; models and groups as arrays or comma lists. */
function channelFields(b: Record<string, unknown>) {
  return defined({
    name: str(b.name),
    type: num(b.type),
    key: str(b.key),
    openaiOrganization: str(b.openai_organization),
    maxInputTokens: num(b.max_input_tokens),
    baseUrl: str(b.base_url),
    other: str(b.other),
    modelMapping: str(b.model_mapping),
    statusCodeMapping: str(b.status_code_mapping),
    models: list(b.models),
    group: list(b.groups ?? b.group),
    autoBan: num(b.auto_ban),
    testModel: str(b.test_model),
    status: num(b.status),
    priority: num(b.priority),
    weight: weightOf(b.weight),
    tag: str(b.tag),
  });
}

/** Only numeric ids reach `:id` handlers (so /channel/test and friends stay distinct). */
const numericId = (req: Request, _res: Response, next: NextFunction) => {
  if (/^\d+$/.test(String(req.params.id))) next();
  else next('route');
};

/** /api/channel (admin): channels, tests, balances, upstream models. */
export function channelRoutes(api: Router, { clients, guard }: RouteDeps): void {
  const { channels } = clients;

  api.get('/channel/', guard.admin, async (req, res) => {
    const r = await channels.listChannels({ page: pageQuery(req), idSort: bool(req.query.id_sort) ?? false });
    ok(res, pageAnswer(r.items, r.page));
  });

  api.get('/channel/search', guard.admin, async (req, res) => {
    const r = await channels.searchChannels({
      keyword: str(req.query.keyword) ?? '',
      group: str(req.query.group) ?? '',
      model: str(req.query.model) ?? '',
      idSort: bool(req.query.id_sort) ?? false,
      page: pageQuery(req),
    });
    ok(res, pageAnswer(r.items, r.page));
  });

  api.get('/channel/test', guard.admin, async (_req, res) => {
    const r = await channels.testAllChannels({});
    ok(res, r.count, `已开始测试 ${r.count} 个渠道，请稍后刷新查看结果`);
  });

  api.get('/channel/test/:id', numericId, guard.admin, async (req, res) => {
    const r = await channels.testChannel(
      { id: idParam(req), model: str(req.query.model) ?? '' },
      { deadlineMs: 90_000 },
    );
    const time = Math.round(r.timeMs) / 1000;
    res.json({ success: r.success, message: r.message, time, data: { time } });
  });

  api.get('/channel/update_balance', guard.admin, async (_req, res) => {
    const r = await channels.updateAllChannelBalances({}, { deadlineMs: 120_000 });
    ok(res, r.count, `已更新 ${r.count} 个渠道的余额`);
  });

  api.get('/channel/update_balance/:id', numericId, guard.admin, async (req, res) => {
    const r = await channels.updateChannelBalance({ id: idParam(req) }, { deadlineMs: 30_000 });
    res.json({ success: true, message: '', balance: r.balance, data: { balance: r.balance } });
  });

  api.get('/channel/fetch_models/:id', numericId, guard.admin, async (req, res) => {
    ok(res, (await channels.fetchUpstreamModels({ id: idParam(req) }, { deadlineMs: 30_000 })).models);
  });

  api.post('/channel/fetch_models', guard.admin, async (req, res) => {
    const b = body(req);
    const r = await channels.fetchUpstreamModels(
      { type: num(b.type) ?? 1, baseUrl: str(b.base_url) ?? '', key: str(b.key) ?? '' },
      { deadlineMs: 30_000 },
    );
    ok(res, r.models);
  });

  api.get('/channel/:id', numericId, guard.admin, async (req, res) => {
    const r = await channels.getChannel({ id: idParam(req), includeKey: true });
    ok(res, r.channel ? snake(r.channel) : null);
  });

  api.post('/channel/', guard.admin, async (req, res) => {
    const raw = body(req);
    const wrapped =
      raw.channel && typeof raw.channel === 'object' ? (raw.channel as Record<string, unknown>) : undefined;
    const b = wrapped ?? raw;
    const fields = channelFields(b);
    const multiLine = (fields.key ?? '').trim().includes('\n');
    const batch = wrapped ? raw.mode === 'batch' : (bool(raw.batch) ?? (multiLine && fields.type !== 41));
    // Channel is a proto3 message: absent numbers arrive as 0, so the form's defaults are set here.
    const r = await channels.createChannels({ channel: { autoBan: 1, ...fields }, batch });
    ok(res, r.ids, r.ids.length > 1 ? `已创建 ${r.ids.length} 个渠道` : '渠道创建成功！');
  });

  api.put('/channel/', guard.admin, async (req, res) => {
    const b = body(req);
    const id = num(b.id);
    if (!id) throw invalid('无效的 ID');
    const r = await channels.updateChannel({ id, ...channelFields(b) });
    ok(res, r.channel ? snake(r.channel) : null, '渠道更新成功！');
  });

  api.delete('/channel/disabled', guard.admin, async (_req, res) => {
    ok(res, (await channels.deleteDisabledChannels({})).count);
  });

  api.delete('/channel/:id', numericId, guard.admin, async (req, res) => {
    await channels.deleteChannel({ id: idParam(req) });
    ok(res);
  });

  api.post('/channel/batch', guard.admin, async (req, res) => {
    const ids = body(req).ids;
    if (!Array.isArray(ids) || ids.length === 0) throw invalid('请先选择要删除的通道！');
    const r = await channels.batchDeleteChannels({ ids: ids.map(Number).filter(Number.isInteger) });
    ok(res, r.count);
  });

  api.post('/channel/fix', guard.admin, async (_req, res) => {
    const r = await channels.fixAbilities({});
    ok(res, r.count, `已修复 ${r.count} 个渠道${r.failed > 0 ? `，${r.failed} 个失败` : ''}`);
  });
}
