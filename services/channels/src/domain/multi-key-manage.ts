/**
 * POST /api/channel/multi_key/manage (new-api's actions): the keys of a multi-key channel with
 * their status (1 enabled, 2 manually disabled, 3 auto-disabled) and last error; disable, enable
 * or delete one key (0-based index) or all. A disabled key leaves the relay's snapshot, so every
 * relay stops using it at the next snapshot.
 */
import { keyFingerprint, splitKeys } from '@aigw/common';
import { invalid } from '@aigw/common/errors';
import type { ChannelDoc, ChannelFields, DisabledKey } from '../data/channel-repository.ts';

export interface ManageRequest {
  action: string;
  keyIndex?: number | undefined;
  page: number;
  pageSize: number;
  status?: number | undefined;
}

export interface KeyState {
  index: number;
  status: number;
  disabledTime: number;
  reason: string;
  keyPreview: string;
}

export interface ManageAnswer {
  message: string;
  keys: KeyState[];
  total: number;
  page: number;
  pageSize: number;
  totalPages: number;
  enabledCount: number;
  manualDisabledCount: number;
  autoDisabledCount: number;
  deletedCount: number;
}

/** What an action changes: the new key lines (when keys were removed) and the disabled list. */
export interface ManagePlan {
  answer: ManageAnswer;
  /** Undefined when nothing is stored (get_key_status). */
  set?: { keys?: string[]; disabled: DisabledKey[] };
}

/** A key as an admin may see it in a list: never whole (first and last 4 characters of long keys). */
export const keyPreview = (key: string) =>
  key.length > 12 ? `${key.slice(0, 4)}********${key.slice(-4)}` : '********';

const statusOf = (d: DisabledKey | undefined) => (d ? (d.status ?? 3) : 1);

function blankAnswer(message: string): ManageAnswer {
  return {
    message,
    keys: [],
    total: 0,
    page: 0,
    pageSize: 0,
    totalPages: 0,
    enabledCount: 0,
    manualDisabledCount: 0,
    autoDisabledCount: 0,
    deletedCount: 0,
  };
}

/** Plans one action on a channel's keys (`keyText` decrypted); throws a clear 4xx for bad input. */
export function planManage(doc: ChannelDoc, keyText: string, req: ManageRequest, now: number): ManagePlan {
  if (!doc.multi_key_mode) throw invalid('该渠道不是多密钥模式');
  const keys = splitKeys(keyText);
  const byHash = new Map((doc.disabled_keys ?? []).map((d) => [d.hash, d]));
  const entries = keys.map((key) => ({ key, hash: keyFingerprint(key), off: byHash.get(keyFingerprint(key)) }));
  const disabledOf = (list: typeof entries) => list.flatMap((e, i) => (e.off ? [{ ...e.off, index: i + 1 }] : []));
  const needIndex = (verb: string) => {
    if (req.keyIndex === undefined) throw invalid(`未指定要${verb}的密钥索引`);
    if (!Number.isInteger(req.keyIndex) || req.keyIndex < 0 || req.keyIndex >= entries.length) {
      throw invalid('密钥索引超出范围');
    }
    return req.keyIndex;
  };

  switch (req.action) {
    case 'get_key_status': {
      const all = entries.map((e, i) => ({
        index: i,
        status: statusOf(e.off),
        disabledTime: e.off?.time ?? 0,
        reason: e.off?.reason ?? '',
        keyPreview: keyPreview(e.key),
      }));
      const filtered = req.status ? all.filter((k) => k.status === req.status) : all;
      const pageSize = req.pageSize > 0 ? Math.min(req.pageSize, 500) : 50;
      const totalPages = Math.max(1, Math.ceil(filtered.length / pageSize));
      const page = Math.min(Math.max(1, req.page || 1), totalPages);
      return {
        answer: {
          ...blankAnswer(''),
          keys: filtered.slice((page - 1) * pageSize, page * pageSize),
          total: filtered.length,
          page,
          pageSize,
          totalPages,
          enabledCount: all.filter((k) => k.status === 1).length,
          manualDisabledCount: all.filter((k) => k.status === 2).length,
          autoDisabledCount: all.filter((k) => k.status === 3).length,
        },
      };
    }
    case 'disable_key': {
      const i = needIndex('禁用');
      const e = entries[i] as (typeof entries)[number];
      e.off = { hash: e.hash, index: i + 1, reason: '', time: now, status: 2 };
      return { answer: blankAnswer('密钥已禁用'), set: { disabled: disabledOf(entries) } };
    }
    case 'enable_key': {
      const i = needIndex('启用');
      (entries[i] as (typeof entries)[number]).off = undefined;
      return { answer: blankAnswer('密钥已启用'), set: { disabled: disabledOf(entries) } };
    }
    case 'enable_all_keys': {
      const n = entries.filter((e) => e.off).length;
      return { answer: blankAnswer(`已启用 ${n} 个密钥`), set: { disabled: [] } };
    }
    case 'disable_all_keys': {
      const on = entries.filter((e) => !e.off);
      if (on.length === 0) throw invalid('没有可禁用的密钥');
      for (const e of on) e.off = { hash: e.hash, index: 0, reason: '', time: now, status: 2 };
      return { answer: blankAnswer(`已禁用 ${on.length} 个密钥`), set: { disabled: disabledOf(entries) } };
    }
    case 'delete_key': {
      const i = needIndex('删除');
      if (entries.length <= 1) throw invalid('不能删除最后一个密钥');
      const rest = entries.filter((_e, j) => j !== i);
      return {
        answer: blankAnswer('密钥已删除'),
        set: { keys: rest.map((e) => e.key), disabled: disabledOf(rest) },
      };
    }
    case 'delete_disabled_keys': {
      const rest = entries.filter((e) => statusOf(e.off) !== 3);
      const deleted = entries.length - rest.length;
      if (deleted === 0) throw invalid('没有需要删除的自动禁用密钥');
      if (rest.length === 0) throw invalid('不能删除最后一个密钥');
      return {
        answer: { ...blankAnswer(`已删除 ${deleted} 个自动禁用的密钥`), deletedCount: deleted },
        set: { keys: rest.map((e) => e.key), disabled: disabledOf(rest) },
      };
    }
    default:
      throw invalid('不支持的操作');
  }
}

/** The stored fields of a plan (keys re-encrypted by the caller). */
export function planFields(plan: ManagePlan, encrypt: (text: string) => string): Partial<ChannelFields> {
  if (!plan.set) return {};
  const out: Partial<ChannelFields> = { disabled_keys: plan.set.disabled };
  if (plan.set.keys) {
    out.key_enc = encrypt(plan.set.keys.join('\n'));
    out.key_count = plan.set.keys.length;
  }
  return out;
}
