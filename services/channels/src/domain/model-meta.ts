import { isDuplicateKey, unpricedModels } from '@aigw/common';
import { conflict, invalid, notFound } from '@aigw/common/errors';
import type { ModelMetaTable, VendorDoc, VendorTable } from '../data/model-meta-repository.ts';
import type { AbilityRow } from './abilities.ts';
import { metaViews, NAME_RULE } from './model-meta-view.ts';

export { NAME_RULE, ruleMatches } from './model-meta-view.ts';

export interface VendorInput {
  id: number;
  name: string;
  description: string;
  icon: string;
  status: number;
}
export interface ModelMetaInput {
  id: number;
  modelName: string;
  description: string;
  icon: string;
  tags: string;
  vendorId: number;
  endpoints: string;
  status: number;
  syncOfficial: number;
  nameRule: number;
}
export interface BoundChannel {
  name: string;
  type: number;
}
export interface VendorView extends Omit<VendorInput, 'id'> {
  id: number;
  createdTime: number;
  updatedTime: number;
}
export interface ModelMetaView extends ModelMetaInput {
  createdTime: number;
  updatedTime: number;
  boundChannels: BoundChannel[];
  enableGroups: string[];
  matchedModels: string[];
  matchedCount: number;
}

/** What the catalogue reads from the rest of the service. */
export interface CatalogueDeps {
  vendors: VendorTable;
  models: ModelMetaTable;
  /** The enabled abilities (group x model -> channel). */
  enabledAbilities(): Promise<AbilityRow[]>;
  channelsByIds(ids: number[]): Promise<{ _id: number; name: string; type: number }[]>;
  /** The ModelPrice and ModelRatio options. */
  prices(): { modelPrice: Record<string, number>; modelRatio: Record<string, number> };
  now?: () => number;
}

const now = () => Math.floor(Date.now() / 1000);

/** A write that lost a race for a unique name (the pre-check passed): the same refusal as the check. */
async function uniquely<T>(write: Promise<T>, message: string): Promise<T> {
  try {
    return await write;
  } catch (err) {
    if (isDuplicateKey(err)) throw conflict(message);
    throw err;
  }
}

const vendorView = (d: VendorDoc): VendorView => ({
  id: d._id,
  name: d.name,
  description: d.description,
  icon: d.icon,
  status: d.status,
  createdTime: d.created_time,
  updatedTime: d.updated_time,
});

function checkModel(m: ModelMetaInput): void {
  if (!m.modelName.trim()) throw invalid('模型名称不能为空');
  if (m.modelName.length > 128) throw invalid('模型名称不能超过 128 个字符');
  if (!Object.values(NAME_RULE).includes(m.nameRule as 0))
    throw invalid('名称匹配规则必须是 0（精确）、1（前缀）、2（包含）或 3（后缀）');
  if (m.status !== 0 && m.status !== 1) throw invalid('状态必须是 0 或 1');
  if (m.syncOfficial !== 0 && m.syncOfficial !== 1) throw invalid('sync_official 必须是 0 或 1');
  if (m.endpoints.trim()) {
    try {
      JSON.parse(m.endpoints);
    } catch {
      throw invalid('端点配置必须是 JSON');
    }
  }
}

const modelFields = (m: ModelMetaInput) => ({
  model_name: m.modelName.trim(),
  description: m.description,
  icon: m.icon,
  tags: m.tags,
  vendor_id: m.vendorId,
  endpoints: m.endpoints,
  status: m.status,
  sync_official: m.syncOfficial,
  name_rule: m.nameRule,
});

/** A list filter's yes/no value ('1', '0' or its words); undefined when it names neither. */
function flag(s: string, yes: string, no: string): 0 | 1 | undefined {
  const t = s.trim().toLowerCase();
  if (t === yes || t === '1') return 1;
  if (t === no || t === '0') return 0;
  return undefined;
}

/** The model list's Mongo filter: a vendor by id or by name, status and sync_official. */
async function modelFilter(
  vendors: VendorTable,
  q: { vendor: string; status: string; syncOfficial: string },
): Promise<Record<string, unknown>> {
  const filter: Record<string, unknown> = {};
  if (q.vendor.trim()) {
    const v = q.vendor.trim();
    if (/^\d+$/.test(v)) filter.vendor_id = Number(v);
    else {
      const { items } = await vendors.page({ keyword: v, fields: ['name'], skip: 0, limit: 1000 });
      filter.vendor_id = { $in: items.map((x) => x._id) };
    }
  }
  const status = flag(q.status, 'enabled', 'disabled');
  if (status !== undefined) filter.status = status;
  const sync = flag(q.syncOfficial, 'yes', 'no');
  if (sync !== undefined) filter.sync_official = sync;
  return filter;
}

/** The vendors' administration. */
function vendorAdmin(deps: CatalogueDeps, clock: () => number) {
  return {
    async listVendors(q: { keyword: string; skip: number; limit: number }) {
      const r = await deps.vendors.page({ ...q, fields: ['name', 'description'] });
      return { items: r.items.map(vendorView), total: r.total };
    },
    async getVendor(id: number) {
      const v = await deps.vendors.get(id);
      if (!v) throw notFound('供应商不存在');
      return vendorView(v);
    },
    async createVendor(v: VendorInput) {
      const name = v.name.trim();
      if (!name) throw invalid('供应商名称不能为空');
      const t = clock();
      const row = {
        name,
        description: v.description,
        icon: v.icon,
        status: v.status,
        created_time: t,
        updated_time: t,
      };
      const id = await deps.vendors.insert(row);
      if (id === undefined) throw conflict('供应商名称已存在');
      return vendorView({ _id: id, ...row });
    },
    async updateVendor(v: VendorInput) {
      if (!v.id) throw invalid('缺少供应商 ID');
      const name = v.name.trim();
      if (!name) throw invalid('供应商名称不能为空');
      const other = await deps.vendors.byName(name);
      if (other && other._id !== v.id) throw conflict('供应商名称已存在');
      const set = { name, description: v.description, icon: v.icon, status: v.status, updated_time: clock() };
      if (!(await uniquely(deps.vendors.update(v.id, set), '供应商名称已存在'))) throw notFound('供应商不存在');
      return vendorView((await deps.vendors.get(v.id)) as VendorDoc);
    },
    async removeVendor(id: number) {
      if (!(await deps.vendors.remove(id))) throw notFound('供应商不存在');
    },
  };
}

/** The model meta entries' administration, each answered with what it matches among served models. */
function modelMetaAdmin(deps: CatalogueDeps, clock: () => number) {
  const checkVendorRef = async (vendorId: number): Promise<void> => {
    if (vendorId !== 0 && !(await deps.vendors.get(vendorId))) throw invalid('供应商不存在');
  };
  const getModel = async (id: number) => {
    const m = await deps.models.get(id);
    if (!m) throw notFound('模型不存在');
    return (await metaViews(deps, [m]))[0] as ModelMetaView;
  };
  return {
    async listModels(q: {
      keyword: string;
      vendor: string;
      status: string;
      syncOfficial: string;
      skip: number;
      limit: number;
    }) {
      const r = await deps.models.page({
        keyword: q.keyword.trim(),
        fields: ['model_name', 'description', 'tags'],
        filter: await modelFilter(deps.vendors, q),
        skip: q.skip,
        limit: q.limit,
      });
      const vendorCounts: Record<string, number> = {};
      for (const m of await deps.models.all())
        vendorCounts[String(m.vendor_id)] = (vendorCounts[String(m.vendor_id)] ?? 0) + 1;
      return { items: await metaViews(deps, r.items), total: r.total, vendorCounts };
    },
    getModel,
    async createModel(m: ModelMetaInput) {
      checkModel(m);
      await checkVendorRef(m.vendorId);
      if (await deps.models.byName(m.modelName.trim())) throw conflict('模型名称已存在');
      const t = clock();
      const row = { ...modelFields(m), created_time: t, updated_time: t };
      const id = await deps.models.insert(row);
      if (id === undefined) throw conflict('模型名称已存在');
      return (await metaViews(deps, [{ _id: id, ...row }]))[0] as ModelMetaView;
    },
    async updateModel(m: ModelMetaInput, statusOnly: boolean) {
      if (!m.id) throw invalid('缺少模型 ID');
      if (statusOnly) {
        if (m.status !== 0 && m.status !== 1) throw invalid('状态必须是 0 或 1');
        if (!(await deps.models.update(m.id, { status: m.status, updated_time: clock() })))
          throw notFound('模型不存在');
      } else {
        checkModel(m);
        await checkVendorRef(m.vendorId);
        const other = await deps.models.byName(m.modelName.trim());
        if (other && other._id !== m.id) throw conflict('模型名称已存在');
        const set = { ...modelFields(m), updated_time: clock() };
        if (!(await uniquely(deps.models.update(m.id, set), '模型名称已存在'))) throw notFound('模型不存在');
      }
      return getModel(m.id);
    },
    async removeModel(id: number) {
      if (!(await deps.models.remove(id))) throw notFound('模型不存在');
    },
  };
}

/** The model catalogue: vendors, model meta, the models missing from it, and the unpriced. */
export function modelCatalogue(deps: CatalogueDeps) {
  const clock = deps.now ?? now;
  return {
    ...vendorAdmin(deps, clock),
    ...modelMetaAdmin(deps, clock),

    /**
     * new-api's missing models: served by an enabled ability, no meta entry of that exact name.
     * `unpriced`: served, and neither ModelPrice nor ModelRatio prices it (the relay refuses it).
     */
    async missing(): Promise<{ missing: string[]; unpriced: string[] }> {
      const names = [...new Set((await deps.enabledAbilities()).map((r) => r.model))].sort();
      const known = new Set((await deps.models.byNames(names)).map((m) => m.model_name));
      const { modelPrice, modelRatio } = deps.prices();
      return {
        missing: names.filter((n) => !known.has(n)),
        // The relay's own lookup (common/model-lookup.ts).
        unpriced: unpricedModels(names, modelPrice, modelRatio),
      };
    },
  };
}

export type ModelCatalogue = ReturnType<typeof modelCatalogue>;
