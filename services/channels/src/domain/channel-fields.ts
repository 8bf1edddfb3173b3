import { type KeyCipher, keyFingerprint } from '@aigw/common';
import { invalid } from '@aigw/common/errors';
import type { ChannelDoc, ChannelFields } from '../data/channel-repository.ts';
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
  multiKeysOf,
  normaliseBaseUrl,
  normaliseList,
  splitList,
} from './channel-rules.ts';

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

/** A new channel's fields before its input is applied. */
export const BLANK_CHANNEL: ChannelFields = {
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

/** Validated channel fields from an input; `base` supplies what the input leaves out. */
export function fieldsOf(input: ChannelInput, base: ChannelFields): ChannelFields {
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
export function keyFields(
  cipher: KeyCipher,
  fields: ChannelFields,
  text: string,
  previous?: ChannelDoc,
): Partial<ChannelFields> {
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
