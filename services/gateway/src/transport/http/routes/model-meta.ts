import { ok } from '@aigw/common';
import type { ModelMeta, Vendor } from '@aigw/proto/channels/v1/channels';
import type { NextFunction, Request, Response, Router } from 'express';
import { z } from 'zod';
import type { RouteDeps } from '../deps.ts';
import { body, flag, id, int, optional, optText, pageOf, pageShape, pathId, text } from '../schemas.ts';
import { input, validate } from '../validate.ts';
import { pageAnswer, snake } from './wire.ts';

/** endpoints: JSON text, or the JSON itself (stored as its text). */
const jsonText = z
  .union([z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown())], { error: '端点配置必须是 JSON' })
  .nullish()
  .transform((v) => (v === null || v === undefined ? undefined : typeof v === 'string' ? v : JSON.stringify(v)));
const bit = (message: string) => optional(int(0, 1, message));

const vendorFields = {
  name: optText,
  description: optText,
  icon: optText,
  status: bit('状态必须是 0 或 1'),
};
const modelFields = {
  model_name: optText,
  description: optText,
  icon: optText,
  tags: optText,
  vendor_id: optional(int(0, Number.MAX_SAFE_INTEGER, '供应商不存在')),
  endpoints: jsonText,
  status: bit('状态必须是 0 或 1'),
  sync_official: bit('sync_official 必须是 0 或 1'),
  name_rule: optional(int(0, 3, '名称匹配规则必须是 0（精确）、1（前缀）、2（包含）或 3（后缀）')),
};

const ById = validate({ params: pathId });
const VendorList = validate({ query: z.object({ keyword: optText, ...pageShape }) });
const VendorCreate = validate({ body: body(vendorFields) });
const VendorUpdate = validate({ body: body({ ...vendorFields, id: optional(id('缺少供应商 ID')) }) });
const ModelList = validate({
  query: z.object({ keyword: optText, vendor: optText, status: optText, sync_official: optText, ...pageShape }),
});
const ModelCreate = validate({ body: body(modelFields) });
const ModelUpdate = validate({
  body: body({ ...modelFields, id: optional(id('缺少模型 ID')) }),
  query: z.object({ status_only: optional(flag) }),
});
const SyncPreview = validate({ query: z.object({ locale: optText }) });
const Sync = validate({
  body: body({
    locale: optText,
    overwrite: z
      .array(z.object({ model_name: text, fields: z.array(text) }), {
        error: 'overwrite 必须是 [{model_name, fields}]',
      })
      .nullish(),
  }),
});

/** Only numeric ids reach `:id` handlers (/models/missing and /models/search stay distinct). */
const numericId = (req: Request, _res: Response, next: NextFunction) => {
  if (/^\d+$/.test(String(req.params.id))) next();
  else next('route');
};
/** `/models/` (the catalogue) and `/models` (models by channel type, models.ts) are new-api's two routes. */
const trailingSlash = (req: Request, _res: Response, next: NextFunction) => {
  if (req.path.endsWith('/')) next();
  else next('route');
};

const vendorJson = (v: Vendor | undefined) => (v ? snake(v) : null);
const modelJson = (m: ModelMeta | undefined) =>
  m ? { ...snake(m), bound_channels: m.boundChannels.map((c) => ({ name: c.name, type: c.type })) } : null;

/**
 * new-api's model catalogue (admin): /api/vendors/* and /api/models/* (metadata, the models
 * channels serve without an entry or without a price, and the sync from upstream metadata).
 * Mounted before models.ts: `/models/` must not reach GET /models.
 */
export function modelMetaRoutes(api: Router, { clients, guard }: RouteDeps): void {
  const { channels } = clients;

  const listVendors = async (req: Request, res: Response) => {
    const q = input(req, VendorList).query;
    const r = await channels.listVendors({ keyword: q.keyword ?? '', page: pageOf(q) });
    ok(res, pageAnswer(r.items, r.page));
  };
  api.get('/vendors/', guard.admin, VendorList, listVendors);
  api.get('/vendors/search', guard.admin, VendorList, listVendors);
  api.get('/vendors/:id', numericId, guard.admin, ById, async (req, res) => {
    ok(res, vendorJson((await channels.getVendor({ id: input(req, ById).params.id })).vendor));
  });
  api.post('/vendors/', guard.admin, VendorCreate, async (req, res) => {
    const b = input(req, VendorCreate).body;
    const r = await channels.createVendor({
      vendor: { name: b.name ?? '', description: b.description ?? '', icon: b.icon ?? '', status: b.status ?? 1 },
    });
    ok(res, vendorJson(r.vendor));
  });
  api.put('/vendors/', guard.admin, VendorUpdate, async (req, res) => {
    const b = input(req, VendorUpdate).body;
    const r = await channels.updateVendor({
      vendor: {
        id: b.id ?? 0,
        name: b.name ?? '',
        description: b.description ?? '',
        icon: b.icon ?? '',
        status: b.status ?? 1,
      },
    });
    ok(res, vendorJson(r.vendor));
  });
  api.delete('/vendors/:id', numericId, guard.admin, ById, async (req, res) => {
    await channels.deleteVendor({ id: input(req, ById).params.id });
    ok(res);
  });

  // new-api's meaning: models enabled channels serve with no metadata entry. `unpriced` (beside
  // data): those neither ModelPrice nor ModelRatio prices, which the relay refuses.
  api.get('/models/missing', guard.admin, async (_req, res) => {
    const r = await channels.listMissingModels({});
    res.json({ success: true, message: '', data: r.missing, unpriced: r.unpriced });
  });
  api.get('/models/sync_upstream/preview', guard.admin, SyncPreview, async (req, res) => {
    const r = await channels.previewUpstreamSync(
      { locale: input(req, SyncPreview).query.locale ?? '' },
      { deadlineMs: 60_000 },
    );
    ok(res, {
      missing: r.missing,
      conflicts: r.conflicts.map((c) => ({
        model_name: c.modelName,
        fields: c.fields.map((f) => ({ field: f.field, local: JSON.parse(f.local), upstream: JSON.parse(f.upstream) })),
      })),
      source: r.source ? snake(r.source) : null,
    });
  });
  api.post('/models/sync_upstream', guard.admin, Sync, async (req, res) => {
    const b = input(req, Sync).body;
    const r = await channels.syncUpstream(
      {
        locale: b.locale ?? '',
        overwrite: (b.overwrite ?? []).map((o) => ({ modelName: o.model_name, fields: o.fields })),
      },
      { deadlineMs: 60_000 },
    );
    ok(res, { ...snake(r), source: r.source ? snake(r.source) : null });
  });

  const listModels = async (req: Request, res: Response) => {
    const q = input(req, ModelList).query;
    const r = await channels.listModelMetas({
      keyword: q.keyword ?? '',
      vendor: q.vendor ?? '',
      status: q.status ?? '',
      syncOfficial: q.sync_official ?? '',
      page: pageOf(q),
    });
    ok(res, { ...pageAnswer([], r.page), items: r.items.map(modelJson), vendor_counts: r.vendorCounts });
  };
  api.get('/models/', trailingSlash, guard.admin, ModelList, listModels);
  api.get('/models/search', guard.admin, ModelList, listModels);
  api.get('/models/:id', numericId, guard.admin, ById, async (req, res) => {
    ok(res, modelJson((await channels.getModelMeta({ id: input(req, ById).params.id })).model));
  });
  const modelOf = (b: z.output<typeof ModelCreate.shapes.body>, id = 0) => ({
    id,
    modelName: b.model_name ?? '',
    description: b.description ?? '',
    icon: b.icon ?? '',
    tags: b.tags ?? '',
    vendorId: b.vendor_id ?? 0,
    endpoints: b.endpoints ?? '',
    status: b.status ?? 1,
    syncOfficial: b.sync_official ?? 1,
    nameRule: b.name_rule ?? 0,
  });
  api.post('/models/', guard.admin, ModelCreate, async (req, res) => {
    ok(res, modelJson((await channels.createModelMeta({ model: modelOf(input(req, ModelCreate).body) })).model));
  });
  api.put('/models/', guard.admin, ModelUpdate, async (req, res) => {
    const { body: b, query } = input(req, ModelUpdate);
    const r = await channels.updateModelMeta({ model: modelOf(b, b.id ?? 0), statusOnly: query.status_only ?? false });
    ok(res, modelJson(r.model));
  });
  api.delete('/models/:id', numericId, guard.admin, ById, async (req, res) => {
    await channels.deleteModelMeta({ id: input(req, ById).params.id });
    ok(res);
  });
}
