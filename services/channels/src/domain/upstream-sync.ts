import { precondition } from '@aigw/common/errors';
import type { ModelMetaDoc, ModelMetaTable, VendorTable } from '../data/model-meta-repository.ts';

/** A model as the upstream lists it (new-api's llm-metadata `newapi/models.json`). */
export interface UpstreamModel {
  model_name: string;
  description?: string;
  icon?: string;
  tags?: string;
  vendor_name?: string;
  name_rule?: number;
  status?: number;
  endpoints?: unknown;
}
/** A vendor as the upstream lists it (`newapi/vendors.json`). */
export interface UpstreamVendor {
  name: string;
  description?: string;
  icon?: string;
  status?: number;
}

export interface SyncSource {
  locale: string;
  modelsUrl: string;
  vendorsUrl: string;
}

const LOCALES = new Set(['en', 'zh-cn', 'zh-tw', 'ja']);
/** The fields an overwrite may name (new-api's). */
export const SYNC_FIELDS = ['description', 'icon', 'tags', 'vendor', 'name_rule', 'status'] as const;

/** new-api's URLs under SYNC_UPSTREAM_BASE; a known locale reads the translated lists. */
export function upstreamUrls(base: string, locale: string): SyncSource {
  const root = base.replace(/\/+$/, '');
  const l = locale.trim();
  const dir = LOCALES.has(l.toLowerCase()) ? `/api/i18n/${l}/newapi` : '/api/newapi';
  return { locale, modelsUrl: `${root}${dir}/models.json`, vendorsUrl: `${root}${dir}/vendors.json` };
}

/** An upstream list: `{success, data: [...]}` or a bare array. */
export function listOf<T>(body: unknown): T[] {
  if (Array.isArray(body)) return body as T[];
  if (body && typeof body === 'object' && Array.isArray((body as { data?: unknown }).data))
    return (body as { data: T[] }).data;
  throw new Error('neither an array nor {data: [...]}');
}

/** new-api's chooseStatus: the upstream's status unless it is 0 and a fallback is given. */
export const chooseStatus = (primary: number | undefined, fallback: number) =>
  primary ? primary : fallback !== 0 ? fallback : 1;

export type Fetch = (url: string) => Promise<unknown>;

/** GET of a JSON list with a timeout; the error says what failed (shown to the admin). */
export function httpFetch(timeoutMs: number, maxBytes = 10 << 20): Fetch {
  return async (url) => {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) }).catch((err: Error) => {
      // Node's "fetch failed" says nothing; its cause names what failed (ENOTFOUND, ECONNREFUSED).
      const code = (err.cause as { code?: string } | undefined)?.code;
      throw new Error(code ? `${err.message} (${code})` : err.message);
    });
    if (!res.ok) throw new Error(`${res.status} ${res.statusText}`);
    const text = await res.text();
    if (text.length > maxBytes) throw new Error('response too large');
    return JSON.parse(text);
  };
}

export interface SyncDeps {
  vendors: VendorTable;
  models: ModelMetaTable;
  /** Served models without a meta entry (the catalogue's `missing`). */
  missing(): Promise<string[]>;
  fetch: Fetch;
  base: string;
  now?: () => number;
}

/** Preview and apply a sync of model and vendor metadata from the upstream (new-api's rules). */
export function upstreamSync(deps: SyncDeps) {
  const clock = deps.now ?? (() => Math.floor(Date.now() / 1000));

  async function load(locale: string) {
    const source = upstreamUrls(deps.base, locale);
    let models: UpstreamModel[];
    try {
      models = listOf<UpstreamModel>(await deps.fetch(source.modelsUrl));
    } catch (err) {
      throw precondition(`获取上游模型失败: ${(err as Error).message}`);
    }
    // A vendor list that fails does not stop the sync (as new-api).
    const vendors = await deps.fetch(source.vendorsUrl).then(listOf<UpstreamVendor>, () => []);
    const modelByName = new Map(models.filter((m) => m?.model_name).map((m) => [m.model_name, m]));
    const vendorByName = new Map(vendors.filter((v) => v?.name).map((v) => [v.name, v]));
    return { source, modelByName, vendorByName };
  }

  return {
    async preview(locale: string) {
      const { source, modelByName } = await load(locale);
      const locals = (await deps.models.byNames([...modelByName.keys()])).filter((m) => m.sync_official !== 0);
      const vendorNames = new Map(
        (await deps.vendors.byIds([...new Set(locals.map((m) => m.vendor_id).filter((id) => id !== 0))])).map((v) => [
          v._id,
          v.name,
        ]),
      );
      const missing = (await deps.missing()).filter((n) => modelByName.has(n));
      const conflicts = [];
      for (const local of locals) {
        const up = modelByName.get(local.model_name) as UpstreamModel;
        const fields: { field: string; local: unknown; upstream: unknown }[] = [];
        const text = (field: string, l: string, u: string | undefined) => {
          if (l.trim() !== (u ?? '').trim()) fields.push({ field, local: l, upstream: u ?? '' });
        };
        text('description', local.description, up.description);
        text('icon', local.icon, up.icon);
        text('tags', local.tags, up.tags);
        text('vendor', vendorNames.get(local.vendor_id) ?? '', up.vendor_name);
        if (local.name_rule !== (up.name_rule ?? 0))
          fields.push({ field: 'name_rule', local: local.name_rule, upstream: up.name_rule ?? 0 });
        if (local.status !== chooseStatus(up.status, local.status))
          fields.push({ field: 'status', local: local.status, upstream: up.status ?? 0 });
        if (fields.length > 0) conflicts.push({ modelName: local.model_name, fields });
      }
      return { missing, conflicts, source };
    },

    async apply(req: { locale: string; overwrite: { modelName: string; fields: string[] }[] }) {
      const out = {
        createdModels: 0,
        createdVendors: 0,
        updatedModels: 0,
        skippedModels: [] as string[],
        createdList: [] as string[],
        updatedList: [] as string[],
        source: upstreamUrls(deps.base, req.locale),
      };
      const missing = await deps.missing();
      if (missing.length === 0 && req.overwrite.length === 0) return out;
      const { source, modelByName, vendorByName } = await load(req.locale);
      out.source = source;

      const vendorIds = new Map<string, number>();
      const vendorId = async (name: string | undefined): Promise<number> => {
        if (!name) return 0;
        const cached = vendorIds.get(name);
        if (cached !== undefined) return cached;
        let id = (await deps.vendors.byName(name))?._id;
        if (id === undefined) {
          const up = vendorByName.get(name);
          const t = clock();
          id = await deps.vendors.insert({
            name,
            description: up?.description ?? '',
            icon: up?.icon ?? '',
            status: chooseStatus(up?.status, 1),
            created_time: t,
            updated_time: t,
          });
          if (id !== undefined) out.createdVendors++;
          // Created meanwhile by someone else: use theirs.
          else id = (await deps.vendors.byName(name))?._id ?? 0;
        }
        vendorIds.set(name, id);
        return id;
      };

      for (const name of missing) {
        const up = modelByName.get(name);
        if (!up) {
          out.skippedModels.push(name);
          continue;
        }
        const t = clock();
        const id = await deps.models.insert({
          model_name: name,
          description: up.description ?? '',
          icon: up.icon ?? '',
          tags: up.tags ?? '',
          vendor_id: await vendorId(up.vendor_name),
          endpoints: up.endpoints === undefined || up.endpoints === null ? '' : JSON.stringify(up.endpoints),
          status: chooseStatus(up.status, 1),
          sync_official: 1,
          name_rule: up.name_rule ?? 0,
          created_time: t,
          updated_time: t,
        });
        if (id === undefined) out.skippedModels.push(name);
        else {
          out.createdModels++;
          out.createdList.push(name);
        }
      }

      for (const ow of req.overwrite) {
        const up = modelByName.get(ow.modelName);
        const local = up && (await deps.models.byName(ow.modelName));
        // Entries the admin took out of the sync (sync_official 0) are never touched.
        if (!up || !local || local.sync_official === 0) continue;
        const want = new Set(ow.fields.map((f) => f.trim().toLowerCase()));
        const set: Partial<ModelMetaDoc> = {};
        if (want.has('description')) set.description = up.description ?? '';
        if (want.has('icon')) set.icon = up.icon ?? '';
        if (want.has('tags')) set.tags = up.tags ?? '';
        if (want.has('vendor')) set.vendor_id = await vendorId(up.vendor_name);
        if (want.has('name_rule')) set.name_rule = up.name_rule ?? 0;
        if (want.has('status')) set.status = chooseStatus(up.status, local.status);
        if (Object.keys(set).length === 0) continue;
        await deps.models.update(local._id, { ...set, updated_time: clock() });
        out.updatedModels++;
        out.updatedList.push(ow.modelName);
      }
      return out;
    },
  };
}

export type UpstreamSync = ReturnType<typeof upstreamSync>;
