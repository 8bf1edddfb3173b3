/**
 * The relay's routing table, built from the channels service's snapshot: group x model ->
 * priority tiers of enabled channels (reference-behaviour step 3). Built once per snapshot so
 * that choosing a channel costs a map lookup and a weighted pick.
 */

import { splitKeys } from '@aigw/common';
import { type Adaptor, adaptorFor } from './adaptors/index.ts';
import { type OverriddenTarget, parseChannelOverrides } from './exchange/channel-overrides.ts';
import { type KeyRing, keyRingOf } from './key-ring.ts';

export interface SnapshotChannel {
  id: number;
  name: string;
  type: number;
  key: string;
  baseUrl: string;
  other: string;
  modelMapping: string;
  statusCodeMapping: string;
  autoBan: boolean;
  status: number;
  openaiOrganization: string;
  /** "" one key; "random" or "polling": `key` holds the enabled keys, one per line. */
  multiKeyMode?: string;
  /** The overrides (JSON text, checked on save by the channels service; "" when unset). */
  paramOverride?: string;
  headerOverride?: string;
  setting?: string;
  settings?: string;
}

export interface SnapshotAbility {
  group: string;
  model: string;
  channelId: number;
  priority: number;
  weight: number;
  enabled: boolean;
}

/** A channel ready to serve: its adaptor, target and parsed mappings. */
export interface RoutedChannel {
  id: number;
  name: string;
  type: number;
  status: number;
  autoBan: boolean;
  adaptor: Adaptor;
  /**
   * The target's key is the first one; requests take theirs from `keys` (multi-key channels).
   * It carries the channel's overrides, applied to each call (exchange/attempt.ts).
   */
  target: OverriddenTarget;
  keys: KeyRing | undefined;
  modelMapping: Record<string, string> | undefined;
  statusCodeMapping: Record<string, string> | undefined;
}

interface Tier {
  priority: number;
  members: { channel: RoutedChannel; weight: number }[];
}

export interface ChannelIndex {
  /** Every channel of the snapshot by id (pinning and tests), enabled or not. */
  byId(id: number): RoutedChannel | undefined;
  /** Whether any enabled channel serves group x model. */
  has(group: string, model: string): boolean;
  /** Whether channel `id` is enabled and serves group x model. */
  serves(group: string, model: string, id: number): boolean;
  /** The channel for attempt `retry` (tier `retry`, or the lowest), excluding those tried. */
  select(
    group: string,
    model: string,
    retry: number,
    exclude: readonly number[],
    random?: () => number,
  ): RoutedChannel | undefined;
  /** Models with an enabled channel in a group, sorted. */
  models(group: string): string[];
  readonly version: number;
}

function parseMap(text: string): Record<string, string> | undefined {
  if (!text || text === '{}') return undefined;
  try {
    const o = JSON.parse(text) as Record<string, unknown>;
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(o)) if (typeof v === 'string' || typeof v === 'number') out[k] = String(v);
    return Object.keys(out).length ? out : undefined;
  } catch {
    return undefined;
  }
}

/** Routes one snapshot channel; undefined when the relay has no adaptor for its type. */
export function routeChannel(c: SnapshotChannel): RoutedChannel | undefined {
  const adaptor = adaptorFor(c.type);
  if (!adaptor) return undefined;
  const keys = keyRingOf(c.multiKeyMode, c.key);
  return {
    id: c.id,
    name: c.name,
    type: c.type,
    status: c.status,
    autoBan: c.autoBan,
    adaptor,
    target: {
      type: c.type,
      key: keys ? (splitKeys(c.key)[0] ?? '') : c.key,
      baseUrl: c.baseUrl,
      other: c.other,
      organization: c.openaiOrganization,
      overrides: parseChannelOverrides(c),
    },
    keys,
    modelMapping: parseMap(c.modelMapping),
    statusCodeMapping: parseMap(c.statusCodeMapping),
  };
}

/** Builds the index; abilities of disabled channels or unknown types are left out. */
export function buildChannelIndex(
  channels: SnapshotChannel[],
  abilities: SnapshotAbility[],
  version = 0,
): ChannelIndex {
  const byId = new Map<number, RoutedChannel>();
  for (const c of channels) {
    const r = routeChannel(c);
    if (r) byId.set(c.id, r);
  }
  const routes = new Map<string, Map<string, Tier[]>>();
  const tmp = new Map<string, Map<string, Map<number, Tier>>>();
  for (const a of abilities) {
    const ch = byId.get(a.channelId);
    if (!a.enabled || !ch || ch.status !== 1) continue;
    let models = tmp.get(a.group);
    if (!models) {
      models = new Map();
      tmp.set(a.group, models);
    }
    let tiers = models.get(a.model);
    if (!tiers) {
      tiers = new Map();
      models.set(a.model, tiers);
    }
    let tier = tiers.get(a.priority);
    if (!tier) {
      tier = { priority: a.priority, members: [] };
      tiers.set(a.priority, tier);
    }
    tier.members.push({ channel: ch, weight: Math.max(0, a.weight) });
  }
  for (const [group, models] of tmp) {
    const m = new Map<string, Tier[]>();
    for (const [model, tiers] of models)
      m.set(
        model,
        [...tiers.values()].sort((a, b) => b.priority - a.priority),
      );
    routes.set(group, m);
  }
  const modelLists = new Map<string, string[]>();
  for (const [group, models] of routes) modelLists.set(group, [...models.keys()].sort());

  return {
    version,
    byId: (id) => byId.get(id),
    has: (group, model) => routes.get(group)?.has(model) ?? false,
    serves: (group, model, id) =>
      routes
        .get(group)
        ?.get(model)
        ?.some((t) => t.members.some((m) => m.channel.id === id)) ?? false,
    models: (group) => modelLists.get(group) ?? [],
    select(group, model, retry, exclude, random = Math.random) {
      const all = routes.get(group)?.get(model);
      if (!all) return undefined;
      const tiers =
        exclude.length === 0
          ? all
          : all
              .map((t) => ({ ...t, members: t.members.filter((m) => !exclude.includes(m.channel.id)) }))
              .filter((t) => t.members.length > 0);
      if (tiers.length === 0) return undefined;
      const tier = tiers[Math.min(Math.max(0, retry), tiers.length - 1)] as Tier;
      const total = tier.members.reduce((s, m) => s + m.weight, 0);
      if (total === 0) return tier.members[Math.floor(random() * tier.members.length)]?.channel;
      let point = random() * total;
      for (const m of tier.members) {
        point -= m.weight;
        if (point < 0) return m.channel;
      }
      return tier.members[tier.members.length - 1]?.channel;
    },
  };
}
