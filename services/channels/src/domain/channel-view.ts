import { keyFingerprint, splitKeys } from '@aigw/common';
import type { Channel, RelayChannel } from '@aigw/proto/channels/v1/channels';
import type { ChannelDoc } from '../data/channel-repository.ts';

/** A channel as the API shows it (channels.v1.Channel); the key only when asked for. */
export type ChannelView = Omit<Channel, '$typeName'>;

/** What the relay needs to call a channel (channels.v1.RelayChannel), key decrypted. */
export type RelayChannelView = Omit<RelayChannel, '$typeName'>;

export const toChannelView = (d: ChannelDoc, key = ''): ChannelView => ({
  id: d._id,
  name: d.name,
  type: d.type,
  key,
  openaiOrganization: d.openai_organization,
  maxInputTokens: d.max_input_tokens,
  baseUrl: d.base_url,
  other: d.other,
  modelMapping: d.model_mapping,
  statusCodeMapping: d.status_code_mapping,
  models: d.models,
  group: d.group,
  autoBan: d.auto_ban,
  testModel: d.test_model,
  status: d.status,
  responseTime: d.response_time,
  usedQuota: d.used_quota,
  balance: d.balance,
  priority: d.priority,
  weight: d.weight,
  otherInfo: d.other_info,
  createdTime: d.created_time,
  testTime: d.test_time,
  balanceUpdatedTime: d.balance_updated_time,
  tag: d.tag,
  multiKeyMode: d.multi_key_mode ?? '',
  multiKeyStatus: d.multi_key_mode
    ? JSON.stringify({
        size: d.key_count ?? 0,
        disabled: (d.disabled_keys ?? []).map((k) => ({
          index: k.index,
          reason: k.reason,
          time: k.time,
          status: k.status ?? 3,
        })),
      })
    : '',
  paramOverride: d.param_override ?? '',
  headerOverride: d.header_override ?? '',
  setting: d.setting ?? '',
  settings: d.settings ?? '',
});

/** The key the relay gets: for a multi-key channel, its enabled keys only. */
export function relayKey(d: ChannelDoc, key: string): string {
  if (!d.multi_key_mode || !d.disabled_keys?.length) return key;
  const off = new Set(d.disabled_keys.map((k) => k.hash));
  return splitKeys(key)
    .filter((k) => !off.has(keyFingerprint(k)))
    .join('\n');
}

export const toRelayChannel = (d: ChannelDoc, key: string): RelayChannelView => ({
  id: d._id,
  name: d.name,
  type: d.type,
  key: relayKey(d, key),
  baseUrl: d.base_url,
  other: d.other,
  modelMapping: d.model_mapping,
  statusCodeMapping: d.status_code_mapping,
  autoBan: d.auto_ban === 1,
  status: d.status,
  openaiOrganization: d.openai_organization,
  maxInputTokens: d.max_input_tokens,
  models: d.models,
  group: d.group,
  testModel: d.test_model,
  priority: d.priority,
  weight: d.weight,
  multiKeyMode: d.multi_key_mode ?? '',
  paramOverride: d.param_override ?? '',
  headerOverride: d.header_override ?? '',
  setting: d.setting ?? '',
  settings: d.settings ?? '',
});
