import { type KeyCipher, keyFingerprint, splitKeys } from '@aigw/common';
import { invalid, notFound } from '@aigw/common/errors';
import type { AbilityRepository } from '../data/ability-repository.ts';
import type { ChannelDoc, ChannelFields, ChannelRepository } from '../data/channel-repository.ts';
import { abilitiesOf } from './abilities.ts';
import { BLANK_CHANNEL, type ChannelInput, fieldsOf, keyFields } from './channel-fields.ts';
import { CHANNEL_STATUS, checkStatus, checkType, keysOf, splitList } from './channel-rules.ts';
import { CHANNEL_TYPES } from './channel-types.ts';
import { type ChannelView, type RelayChannelView, toChannelView, toRelayChannel } from './channel-view.ts';
import { keyedMutex } from './keyed-mutex.ts';
import { type ManageAnswer, type ManageRequest, planFields, planManage } from './multi-key-manage.ts';
import { selectChannel } from './select-channel.ts';

export type { ChannelInput } from './channel-fields.ts';

/** Tells caches (the relay's snapshot) that channels changed. */
export type ChannelChanged = (id: number, action: 'created' | 'updated' | 'deleted') => Promise<void>;

interface ServiceDeps {
  channels: ChannelRepository;
  abilities: AbilityRepository;
  cipher: KeyCipher;
  changed: ChannelChanged;
}

const nowSec = () => Math.floor(Date.now() / 1000);

function searchable(c: ChannelDoc, key: string, keyword: string): boolean {
  const k = keyword.toLowerCase();
  return (
    String(c._id) === keyword ||
    c.name.toLowerCase().includes(k) ||
    c.base_url.toLowerCase().includes(k) ||
    (key !== '' && key.includes(keyword))
  );
}

/** What every operation shares: the stores, the per-channel lock, the snapshot version and the change notice. */
function serviceCore(deps: ServiceDeps) {
  const { channels, abilities, cipher } = deps;
  const state = { version: Date.now() };

  const reveal = (d: ChannelDoc) => (d.key_enc ? cipher.decrypt(d.key_enc) : '');

  async function notify(ids: number[], action: 'created' | 'updated' | 'deleted') {
    state.version = Math.max(Date.now(), state.version + 1);
    for (const id of ids) await deps.changed(id, action);
  }

  async function existing(id: number): Promise<ChannelDoc> {
    const doc = await channels.get(id);
    if (!doc) throw notFound('渠道未找到，请刷新页面后重试。');
    return doc;
  }

  const reindex = (d: ChannelDoc) =>
    abilities.replaceOf(
      d._id,
      abilitiesOf({
        id: d._id,
        models: d.models,
        group: d.group,
        priority: d.priority,
        weight: d.weight,
        status: d.status,
      }),
    );

  return { channels, abilities, cipher, state, lock: keyedMutex(), reveal, notify, existing, reindex };
}

type Core = ReturnType<typeof serviceCore>;

/** Listing, search and reading one channel, the relay's pick and its snapshot. */
function channelReads(core: Core) {
  const { channels, abilities, reveal, existing } = core;
  return {
    async list(opts: { skip: number; limit: number; idSort: boolean; status?: number; type?: number }) {
      const { items, total } = await channels.page(opts);
      return { items: items.map((d) => toChannelView(d)), total };
    },

    /** Keyword on id, name, base_url and key (decrypted here: keys are never queryable at rest). */
    async search(opts: {
      keyword: string;
      group: string;
      model: string;
      idSort: boolean;
      skip: number;
      limit: number;
    }) {
      const keyword = opts.keyword.trim();
      const all = await channels.all();
      const hits = all.filter((c) => {
        if (opts.group && !splitList(c.group).includes(opts.group.trim())) return false;
        if (opts.model && !splitList(c.models).some((m) => m.includes(opts.model.trim()))) return false;
        return keyword === '' || searchable(c, keyword.length >= 6 ? reveal(c) : '', keyword);
      });
      hits.sort((a, b) => (opts.idSort ? b._id - a._id : b.priority - a.priority || b._id - a._id));
      return { items: hits.slice(opts.skip, opts.skip + opts.limit).map((d) => toChannelView(d)), total: hits.length };
    },

    async get(id: number, includeKey: boolean): Promise<ChannelView> {
      const doc = await existing(id);
      return toChannelView(doc, includeKey ? reveal(doc) : '');
    },

    async select(group: string, model: string, retry: number, exclude: number[]): Promise<RelayChannelView> {
      const rows = await abilities.enabled({ group, model });
      const pick = selectChannel(
        rows.map((r) => ({ channelId: r.channel_id, priority: r.priority, weight: r.weight })),
        { retry, exclude },
      );
      if (!pick) throw notFound(`分组 ${group} 下模型 ${model} 无可用渠道`);
      const doc = await existing(pick.channelId);
      return toRelayChannel(doc, reveal(doc));
    },

    async snapshot() {
      const [rows, docs] = await Promise.all([abilities.all(), channels.all()]);
      const referenced = new Set(rows.map((r) => r.channel_id));
      return {
        abilities: rows.map((r) => ({
          group: r.group,
          model: r.model,
          channelId: r.channel_id,
          priority: r.priority,
          weight: r.weight,
          enabled: r.enabled,
        })),
        channels: docs.filter((d) => referenced.has(d._id)).map((d) => toRelayChannel(d, reveal(d))),
        version: core.state.version,
      };
    },
  };
}

/** Creating and editing channels, and their status. */
function channelEdits(core: Core) {
  const { channels, cipher, lock, reveal, notify, existing, reindex } = core;
  return {
    async create(input: ChannelInput, batch: boolean): Promise<number[]> {
      if (!input.name?.trim() || !input.key?.trim()) throw invalid('请填写渠道名称和渠道密钥！');
      const type = checkType(input.type ?? 1);
      const fields = fieldsOf({ ...input, type, status: input.status || CHANNEL_STATUS.enabled }, BLANK_CHANNEL);
      if (fields.multi_key_mode) {
        const doc = await channels.insert({
          ...fields,
          ...keyFields(cipher, fields, input.key),
          created_time: nowSec(),
        });
        await reindex(doc);
        await notify([doc._id], 'created');
        return [doc._id];
      }
      const keys = keysOf(type, input.key, batch && type !== 41);
      const ids: number[] = [];
      for (const key of keys) {
        const doc = await channels.insert({ ...fields, key_enc: cipher.encrypt(key), created_time: nowSec() });
        await reindex(doc);
        ids.push(doc._id);
      }
      await notify(ids, 'created');
      return ids;
    },

    async update(id: number, input: ChannelInput): Promise<ChannelView> {
      return lock(String(id), async () => {
        const doc = await existing(id);
        const fields = fieldsOf(input, doc);
        const key = input.key?.trim();
        if (key) Object.assign(fields, keyFields(cipher, fields, key, doc));
        else if (fields.multi_key_mode !== (doc.multi_key_mode ?? '')) {
          // The mode changed without a new key: the stored key must fit the new mode.
          Object.assign(fields, keyFields(cipher, fields, reveal(doc), doc));
        }
        if (input.status !== undefined && input.status !== doc.status) {
          fields.other_info = input.status === CHANNEL_STATUS.enabled ? '' : doc.other_info;
        }
        // Enabling a channel enables all its keys.
        if (input.status === CHANNEL_STATUS.enabled) fields.disabled_keys = [];
        const updated = (await channels.update(id, fields)) ?? doc;
        await reindex(updated);
        await notify([id], 'updated');
        return toChannelView(updated);
      });
    },

    /** Status 1, 2, or 3 with a reason kept in other_info (status_reason, status_time). */
    async setStatus(id: number, status: number, reason: string): Promise<ChannelView> {
      checkStatus(status);
      return lock(String(id), async () => {
        await existing(id);
        const otherInfo =
          status === CHANNEL_STATUS.enabled
            ? ''
            : JSON.stringify({ status_reason: reason.slice(0, 500), status_time: nowSec() });
        const updated = await channels.update(id, {
          status,
          other_info: otherInfo,
          ...(status === CHANNEL_STATUS.enabled ? { disabled_keys: [] } : {}),
        });
        if (!updated) throw notFound('渠道未找到，请刷新页面后重试。');
        await reindex(updated);
        await notify([id], 'updated');
        return toChannelView(updated);
      });
    },
  };
}

/** The keys of multi-key channels: one disabled by the health rules, or managed by an admin. */
function multiKeyEdits(core: Core) {
  const { channels, cipher, lock, reveal, notify, existing, reindex } = core;
  return {
    /**
     * Disables one key of a multi-key channel (by fingerprint); when none is left the channel
     * goes to status 3. False when the channel has no such enabled key.
     */
    async disableKey(id: number, hash: string, reason: string): Promise<boolean> {
      return lock(String(id), async () => {
        const doc = await existing(id);
        if (!doc.multi_key_mode) return false;
        const keys = splitKeys(reveal(doc));
        const index = keys.findIndex((k) => keyFingerprint(k) === hash) + 1;
        const disabled = doc.disabled_keys ?? [];
        if (index === 0 || disabled.some((d) => d.hash === hash)) return false;
        const now = nowSec();
        const next = [...disabled, { hash, index, reason: reason.slice(0, 300), time: now }];
        const set: Partial<ChannelFields> = { disabled_keys: next };
        if (next.length >= keys.length) {
          set.status = CHANNEL_STATUS.autoDisabled;
          set.other_info = JSON.stringify({
            status_reason: `所有密钥均已禁用：${reason}`.slice(0, 500),
            status_time: now,
          });
        }
        const updated = (await channels.update(id, set)) ?? doc;
        if (set.status) await reindex(updated);
        await notify([id], 'updated');
        return true;
      });
    },

    /** POST /api/channel/multi_key/manage: lists, disables, enables or deletes keys (multi-key-manage.ts). */
    async manageKeys(id: number, req: ManageRequest): Promise<ManageAnswer> {
      const run = async () => {
        const doc = await existing(id);
        const plan = planManage(doc, reveal(doc), req, nowSec());
        if (!plan.set) return plan.answer;
        await channels.update(
          id,
          planFields(plan, (t) => cipher.encrypt(t)),
        );
        await notify([id], 'updated');
        return plan.answer;
      };
      return req.action === 'get_key_status' ? run() : lock(String(id), run);
    },
  };
}

/** Operational records, deletion and the rebuild of the abilities index. */
function channelUpkeep(core: Core) {
  const { channels, abilities, lock, notify, reindex } = core;
  async function remove(ids: number[]): Promise<number> {
    const count = await channels.remove(ids);
    await abilities.removeOf(ids);
    if (count > 0) await notify(ids, 'deleted');
    return count;
  }
  return {
    /** Stores operational fields (test results, balance) that do not change routing. */
    async record(
      id: number,
      set: Partial<Pick<ChannelFields, 'response_time' | 'test_time' | 'balance' | 'balance_updated_time'>>,
    ) {
      return channels.update(id, set);
    },

    remove,

    async removeDisabled(): Promise<number> {
      const ids = await channels.idsWithStatus([CHANNEL_STATUS.manuallyDisabled, CHANNEL_STATUS.autoDisabled]);
      return remove(ids);
    },

    /** Rebuilds every channel's abilities and drops rows of channels that no longer exist. */
    async fixAbilities(): Promise<{ count: number; failed: number }> {
      const all = await channels.all();
      let count = 0;
      let failed = 0;
      for (const c of all) {
        try {
          await lock(String(c._id), () => reindex(c));
          count++;
        } catch {
          failed++;
        }
      }
      const known = new Set(all.map((c) => c._id));
      const orphans = [...new Set((await abilities.all()).map((a) => a.channel_id))].filter((id) => !known.has(id));
      await abilities.removeOf(orphans);
      await notify([0], 'updated');
      return { count, failed };
    },
  };
}

/** The models and groups the abilities index serves. */
function abilityReads(core: Core) {
  const { abilities } = core;
  return {
    modelsByType(): Record<number, string[]> {
      return Object.fromEntries(Object.entries(CHANNEL_TYPES).map(([t, def]) => [Number(t), def.models]));
    },

    async enabledModels(): Promise<string[]> {
      return [...new Set((await abilities.enabled()).map((a) => a.model))].sort();
    },

    async groupModels(group: string): Promise<string[]> {
      return [...new Set((await abilities.enabled({ group })).map((a) => a.model))].sort();
    },

    async groups(): Promise<string[]> {
      return [...new Set((await abilities.all()).map((a) => a.group))].sort();
    },

    async modelGroups(): Promise<{ model: string; groups: string[] }[]> {
      const byModel = new Map<string, Set<string>>();
      for (const a of await abilities.enabled()) {
        const set = byModel.get(a.model) ?? new Set<string>();
        set.add(a.group);
        byModel.set(a.model, set);
      }
      return [...byModel].map(([model, groups]) => ({ model, groups: [...groups].sort() }));
    },
  };
}

/** Channel administration and the abilities index, kept exact on every change. */
export function channelsService(deps: ServiceDeps) {
  const core = serviceCore(deps);
  return {
    reveal: core.reveal,
    existing: core.existing,
    get version() {
      return core.state.version;
    },
    ...channelReads(core),
    ...channelEdits(core),
    ...multiKeyEdits(core),
    ...channelUpkeep(core),
    ...abilityReads(core),
  };
}

export type ChannelsService = ReturnType<typeof channelsService>;
