import { type KeyCipher, keyFingerprint, splitKeys } from '@aigw/common';
import { invalid, notFound } from '@aigw/common/errors';
import type { AbilityRepository } from '../data/ability-repository.ts';
import type { ChannelDoc, ChannelFields, ChannelRepository } from '../data/channel-repository.ts';
import { abilitiesOf } from './abilities.ts';
import { checkHeaderOverride, checkOtherSettings, checkParamOverride, checkSetting } from './channel-overrides.ts';
import {
  CHANNEL_STATUS,
  checkKey,
  checkModelMapping,
  checkMultiKeyMode,
  checkOther,
  checkPriority,
  checkStatus,
  checkStatusCodeMapping,
  checkType,
  checkWeight,
  keysOf,
  multiKeysOf,
  normaliseBaseUrl,
  normaliseList,
  splitList,
} from './channel-rules.ts';
import { CHANNEL_TYPES } from './channel-types.ts';
import { type ChannelView, type RelayChannelView, toChannelView, toRelayChannel } from './channel-view.ts';
import { keyedMutex } from './keyed-mutex.ts';
import { type ManageAnswer, type ManageRequest, planFields, planManage } from './multi-key-manage.ts';
import { selectChannel } from './select-channel.ts';

/** Tells caches (the relay's snapshot) that channels changed. */
export type ChannelChanged = (id: number, action: 'created' | 'updated' | 'deleted') => Promise<void>;

/** Fields a create or update may carry (channels.v1 Channel / UpdateChannelRequest). */
export interface ChannelInput {
  name?: string | undefined;
  type?: number | undefined;
  key?: string | undefined;
  openaiOrganization?: string | undefined;
  maxInputTokens?: number | undefined;
  baseUrl?: string | undefined;
  other?: string | undefined;
  modelMapping?: string | undefined;
  statusCodeMapping?: string | undefined;
  models?: string | undefined;
  group?: string | undefined;
  autoBan?: number | undefined;
  testModel?: string | undefined;
  status?: number | undefined;
  priority?: number | undefined;
  weight?: number | undefined;
  tag?: string | undefined;
  multiKeyMode?: string | undefined;
  paramOverride?: string | undefined;
  headerOverride?: string | undefined;
  setting?: string | undefined;
  settings?: string | undefined;
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

/** Channel administration and the abilities index, kept exact on every change. */
export function channelsService(deps: {
  channels: ChannelRepository;
  abilities: AbilityRepository;
  cipher: KeyCipher;
  changed: ChannelChanged;
}) {
  const { channels, abilities, cipher } = deps;
  const lock = keyedMutex();
  let version = Date.now();

  const reveal = (d: ChannelDoc) => (d.key_enc ? cipher.decrypt(d.key_enc) : '');

  async function notify(ids: number[], action: 'created' | 'updated' | 'deleted') {
    version = Math.max(Date.now(), version + 1);
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

  /** Validated channel fields from an input; `base` supplies what the input leaves out. */
  function fieldsOf(input: ChannelInput, base: ChannelFields): ChannelFields {
    const type = input.type === undefined ? base.type : checkType(input.type);
    const models = input.models === undefined ? base.models : normaliseList(input.models);
    if (splitList(models).length === 0) throw invalid('请至少选择一个模型！');
    const name = input.name === undefined ? base.name : input.name.trim();
    if (name === '') throw invalid('请填写渠道名称和渠道密钥！');
    const group = input.group === undefined ? base.group : normaliseList(input.group) || 'default';
    return {
      ...base,
      name,
      type,
      openai_organization: input.openaiOrganization?.trim() ?? base.openai_organization,
      max_input_tokens: input.maxInputTokens ?? base.max_input_tokens,
      base_url: input.baseUrl === undefined ? base.base_url : normaliseBaseUrl(input.baseUrl),
      other: checkOther(type, input.other ?? base.other),
      model_mapping: input.modelMapping === undefined ? base.model_mapping : checkModelMapping(input.modelMapping),
      status_code_mapping:
        input.statusCodeMapping === undefined
          ? base.status_code_mapping
          : checkStatusCodeMapping(input.statusCodeMapping),
      models,
      group,
      auto_ban: input.autoBan === undefined ? base.auto_ban : input.autoBan ? 1 : 0,
      test_model: input.testModel?.trim() ?? base.test_model,
      status: input.status === undefined ? base.status : checkStatus(input.status),
      priority: input.priority === undefined ? base.priority : checkPriority(input.priority),
      weight: input.weight === undefined ? base.weight : checkWeight(input.weight),
      tag: input.tag?.trim() ?? base.tag,
      multi_key_mode:
        input.multiKeyMode === undefined ? (base.multi_key_mode ?? '') : checkMultiKeyMode(input.multiKeyMode),
      param_override:
        input.paramOverride === undefined ? (base.param_override ?? '') : checkParamOverride(input.paramOverride),
      header_override:
        input.headerOverride === undefined ? (base.header_override ?? '') : checkHeaderOverride(input.headerOverride),
      setting: input.setting === undefined ? (base.setting ?? '') : checkSetting(input.setting),
      settings: input.settings === undefined ? (base.settings ?? '') : checkOtherSettings(input.settings),
    };
  }

  /** Key fields of a key text: one encrypted key, or several (multi-key) with their count. */
  function keyFields(fields: ChannelFields, text: string, previous?: ChannelDoc): Partial<ChannelFields> {
    if (!fields.multi_key_mode) {
      if (fields.type !== 41 && text.trim().includes('\n'))
        throw invalid('单密钥渠道只能填写一个密钥；多个密钥请开启多密钥模式');
      return { key_enc: cipher.encrypt(checkKey(fields.type, text)), key_count: 1, disabled_keys: [] };
    }
    const keys = multiKeysOf(fields.type, text);
    // Keys kept across an edit stay disabled (at their new line).
    const line = new Map(keys.map((k, i) => [keyFingerprint(k), i + 1]));
    const kept = (previous?.disabled_keys ?? [])
      .filter((d) => line.has(d.hash))
      .map((d) => ({ ...d, index: line.get(d.hash) ?? d.index }));
    return { key_enc: cipher.encrypt(keys.join('\n')), key_count: keys.length, disabled_keys: kept };
  }

  const blank: ChannelFields = {
    name: '',
    type: 1,
    key_enc: '',
    openai_organization: '',
    max_input_tokens: 0,
    base_url: '',
    other: '',
    model_mapping: '',
    status_code_mapping: '',
    models: '',
    group: 'default',
    auto_ban: 1,
    test_model: '',
    status: CHANNEL_STATUS.enabled,
    response_time: 0,
    used_quota: 0,
    balance: 0,
    priority: 0,
    weight: 0,
    other_info: '',
    created_time: 0,
    test_time: 0,
    balance_updated_time: 0,
    tag: '',
    multi_key_mode: '',
    key_count: 1,
    disabled_keys: [],
  };

  return {
    reveal,
    existing,
    get version() {
      return version;
    },

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

    async create(input: ChannelInput, batch: boolean): Promise<number[]> {
      if (!input.name?.trim() || !input.key?.trim()) throw invalid('请填写渠道名称和渠道密钥！');
      const type = checkType(input.type ?? 1);
      const fields = fieldsOf({ ...input, type, status: input.status || CHANNEL_STATUS.enabled }, blank);
      if (fields.multi_key_mode) {
        const doc = await channels.insert({ ...fields, ...keyFields(fields, input.key), created_time: nowSec() });
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
        if (key) Object.assign(fields, keyFields(fields, key, doc));
        else if (fields.multi_key_mode !== (doc.multi_key_mode ?? '')) {
          // The mode changed without a new key: the stored key must fit the new mode.
          Object.assign(fields, keyFields(fields, reveal(doc), doc));
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

    /** Stores operational fields (test results, balance) that do not change routing. */
    async record(
      id: number,
      set: Partial<Pick<ChannelFields, 'response_time' | 'test_time' | 'balance' | 'balance_updated_time'>>,
    ) {
      return channels.update(id, set);
    },

    async remove(ids: number[]): Promise<number> {
      const count = await channels.remove(ids);
      await abilities.removeOf(ids);
      if (count > 0) await notify(ids, 'deleted');
      return count;
    },

    async removeDisabled(): Promise<number> {
      const ids = await channels.idsWithStatus([CHANNEL_STATUS.manuallyDisabled, CHANNEL_STATUS.autoDisabled]);
      return this.remove(ids);
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
        version,
      };
    },
  };
}

export type ChannelsService = ReturnType<typeof channelsService>;
