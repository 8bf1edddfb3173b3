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

/** One field where a local entry and the upstream's differ. */
export interface FieldConflict {
  field: string;
  local: unknown;
  upstream: unknown;
}

/** The fields where a synced local entry differs from the upstream's (new-api's preview). */
export function conflictsOf(local: ModelMetaDoc, up: UpstreamModel, vendorName: string): FieldConflict[] {
  const fields: FieldConflict[] = [];
  const text = (field: string, l: string, u: string | undefined) => {
    if (l.trim() !== (u ?? '').trim()) fields.push({ field, local: l, upstream: u ?? '' });
  };
  text('description', local.description, up.description);
  text('icon', local.icon, up.icon);
  text('tags', local.tags, up.tags);
  text('vendor', vendorName, up.vendor_name);
  if (local.name_rule !== (up.name_rule ?? 0))
    fields.push({ field: 'name_rule', local: local.name_rule, upstream: up.name_rule ?? 0 });
  if (local.status !== chooseStatus(up.status, local.status))
    fields.push({ field: 'status', local: local.status, upstream: up.status ?? 0 });
  return fields;
}

/** What an apply did (new-api's answer). */
interface ApplyOut {
  createdModels: number;
  createdVendors: number;
  updatedModels: number;
  skippedModels: string[];
  createdList: string[];
  updatedList: string[];
  source: SyncSource;
}

type Loaded = {
  source: SyncSource;
  modelByName: Map<string, UpstreamModel>;
  vendorByName: Map<string, UpstreamVendor>;
};

/** The upstream's lists for a locale, by name; a models list that fails stops the sync. */
async function loadUpstream(deps: SyncDeps, locale: string): Promise<Loaded> {
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

/** A vendor's id by name, created from the upstream's entry when missing (cached for one apply). */
function vendorIds(deps: SyncDeps, clock: () => number, vendorByName: Loaded['vendorByName'], out: ApplyOut) {
  const ids = new Map<string, number>();
  return async (name: string | undefined): Promise<number> => {
    if (!name) return 0;
    const cached = ids.get(name);
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
    ids.set(name, id);
    return id;
  };
}

type VendorId = ReturnType<typeof vendorIds>;

/** Creates the missing models the upstream lists; the others are skipped. */
async function createMissing(
  deps: SyncDeps,
  clock: () => number,
  missing: string[],
  up: { modelByName: Loaded['modelByName']; vendorId: VendorId },
  out: ApplyOut,
): Promise<void> {
  for (const name of missing) {
    const m = up.modelByName.get(name);
    if (!m) {
      out.skippedModels.push(name);
      continue;
    }
    const t = clock();
    const id = await deps.models.insert({
      model_name: name,
      description: m.description ?? '',
      icon: m.icon ?? '',
      tags: m.tags ?? '',
      vendor_id: await up.vendorId(m.vendor_name),
      endpoints: m.endpoints === undefined || m.endpoints === null ? '' : JSON.stringify(m.endpoints),
      status: chooseStatus(m.status, 1),
      sync_official: 1,
      name_rule: m.name_rule ?? 0,
      created_time: t,
      updated_time: t,
    });
    if (id === undefined) out.skippedModels.push(name);
    else {
      out.createdModels++;
      out.createdList.push(name);
    }
  }
}

/** Overwrites the fields the admin chose with the upstream's, on entries still synced. */
async function overwriteChosen(
  deps: SyncDeps,
  clock: () => number,
  overwrite: { modelName: string; fields: string[] }[],
  up: { modelByName: Loaded['modelByName']; vendorId: VendorId },
  out: ApplyOut,
): Promise<void> {
  for (const ow of overwrite) {
    const m = up.modelByName.get(ow.modelName);
    const local = m && (await deps.models.byName(ow.modelName));
    // Entries the admin took out of the sync (sync_official 0) are never touched.
    if (!m || !local || local.sync_official === 0) continue;
    const want = new Set(ow.fields.map((f) => f.trim().toLowerCase()));
    const set: Partial<ModelMetaDoc> = {};
    if (want.has('description')) set.description = m.description ?? '';
    if (want.has('icon')) set.icon = m.icon ?? '';
    if (want.has('tags')) set.tags = m.tags ?? '';
    if (want.has('vendor')) set.vendor_id = await up.vendorId(m.vendor_name);
    if (want.has('name_rule')) set.name_rule = m.name_rule ?? 0;
    if (want.has('status')) set.status = chooseStatus(m.status, local.status);
    if (Object.keys(set).length === 0) continue;
    await deps.models.update(local._id, { ...set, updated_time: clock() });
    out.updatedModels++;
    out.updatedList.push(ow.modelName);
  }
}

/** Preview and apply a sync of model and vendor metadata from the upstream (new-api's rules). */
export function upstreamSync(deps: SyncDeps) {
  const clock = deps.now ?? (() => Math.floor(Date.now() / 1000));

  return {
    async preview(locale: string) {
      const { source, modelByName } = await loadUpstream(deps, locale);
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
        const fields = conflictsOf(local, up, vendorNames.get(local.vendor_id) ?? '');
        if (fields.length > 0) conflicts.push({ modelName: local.model_name, fields });
      }
      return { missing, conflicts, source };
    },

    async apply(req: { locale: string; overwrite: { modelName: string; fields: string[] }[] }) {
      const out: ApplyOut = {
        createdModels: 0,
        createdVendors: 0,
        updatedModels: 0,
        skippedModels: [],
        createdList: [],
        updatedList: [],
        source: upstreamUrls(deps.base, req.locale),
      };
      const missing = await deps.missing();
      if (missing.length === 0 && req.overwrite.length === 0) return out;
      const { source, modelByName, vendorByName } = await loadUpstream(deps, req.locale);
      out.source = source;
      const up = { modelByName, vendorId: vendorIds(deps, clock, vendorByName, out) };
      await createMissing(deps, clock, missing, up, out);
      await overwriteChosen(deps, clock, req.overwrite, up, out);
      return out;
    },
  };
}

export type UpstreamSync = ReturnType<typeof upstreamSync>;
