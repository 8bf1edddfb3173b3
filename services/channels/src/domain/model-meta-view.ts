import type { ModelMetaDoc } from '../data/model-meta-repository.ts';
import type { BoundChannel, CatalogueDeps, ModelMetaView } from './model-meta.ts';

/** new-api's name_rule: how a meta entry's model_name matches served models. */
export const NAME_RULE = { exact: 0, prefix: 1, contains: 2, suffix: 3 } as const;

/** Whether a meta entry's rule matches a served model name. */
export function ruleMatches(rule: number, pattern: string, model: string): boolean {
  if (rule === NAME_RULE.prefix) return model.startsWith(pattern);
  if (rule === NAME_RULE.contains) return model.includes(pattern);
  if (rule === NAME_RULE.suffix) return model.endsWith(pattern);
  return model === pattern;
}

/** What the enabled abilities serve: each model with its enabled channels and groups. */
export type ServedModels = Map<string, { channels: Map<number, BoundChannel>; groups: Set<string> }>;

/** Served models -> their enabled channels and groups. */
export async function servedModels(deps: Pick<CatalogueDeps, 'enabledAbilities' | 'channelsByIds'>) {
  const rows = await deps.enabledAbilities();
  const channels = new Map(
    (await deps.channelsByIds([...new Set(rows.map((r) => r.channel_id))])).map((c) => [c._id, c]),
  );
  const byModel: ServedModels = new Map();
  for (const r of rows) {
    const ch = channels.get(r.channel_id);
    let entry = byModel.get(r.model);
    if (!entry) {
      entry = { channels: new Map(), groups: new Set() };
      byModel.set(r.model, entry);
    }
    if (ch) entry.channels.set(ch._id, { name: ch.name, type: ch.type });
    entry.groups.add(r.group);
  }
  return byModel;
}

/** A meta entry as the console sees it: the served models its rule matches, their channels and groups. */
export function metaView(d: ModelMetaDoc, byModel: ServedModels): ModelMetaView {
  const matched = [...byModel.keys()].filter((m) => ruleMatches(d.name_rule, d.model_name, m)).sort();
  const channels = new Map<string, BoundChannel>();
  const groups = new Set<string>();
  for (const m of matched) {
    const e = byModel.get(m);
    for (const c of e?.channels.values() ?? []) channels.set(`${c.name}|${c.type}`, c);
    for (const g of e?.groups ?? []) groups.add(g);
  }
  const rule = d.name_rule !== NAME_RULE.exact;
  return {
    id: d._id,
    modelName: d.model_name,
    description: d.description,
    icon: d.icon,
    tags: d.tags,
    vendorId: d.vendor_id,
    endpoints: d.endpoints,
    status: d.status,
    syncOfficial: d.sync_official,
    nameRule: d.name_rule,
    createdTime: d.created_time,
    updatedTime: d.updated_time,
    boundChannels: [...channels.values()],
    enableGroups: [...groups].sort(),
    matchedModels: rule ? matched : [],
    matchedCount: rule ? matched.length : 0,
  };
}

/** Meta entries with what they match (the served models are read only when there are entries). */
export async function metaViews(
  deps: Pick<CatalogueDeps, 'enabledAbilities' | 'channelsByIds'>,
  docs: ModelMetaDoc[],
): Promise<ModelMetaView[]> {
  const byModel: ServedModels = docs.length > 0 ? await servedModels(deps) : new Map();
  return docs.map((d) => metaView(d, byModel));
}
