/**
 * The channel form's values and rules (pure, tested without a browser): the values of a stored
 * channel, the checks in the order the form makes them (their messages are spec 01's), the body
 * sent, and what changing the type does to the other fields.
 */
import type { Channel, ChannelInput, ChannelTypeInfo } from '../../api/channel.ts';
import { tr } from '../../locale/translate.ts';
import { type OverrideFields, overrideErrors, overrideFieldsOf, overridesBody } from './channel-overrides.ts';
import { defaultOther, keyParts } from './channel-types.ts';

export const MAPPING_EXAMPLE = JSON.stringify(
  { 'gpt-3.5-turbo': 'gpt-3.5-turbo-0125', 'gpt-4': 'gpt-4-0613', 'gpt-4-32k': 'gpt-4-32k-0613' },
  null,
  2,
);
export const STATUS_CODE_EXAMPLE = JSON.stringify({ 400: '500' }, null, 2);

export type MultiKeyMode = '' | 'random' | 'polling';

export interface ChannelFormValues {
  name: string;
  type: number;
  key: string;
  base_url: string;
  other: string;
  openai_organization: string;
  models: string[];
  groups: string[];
  model_mapping: string;
  status_code_mapping: string;
  test_model: string;
  max_input_tokens: number;
  auto_ban: boolean;
  priority: number;
  weight: number;
  batch: boolean;
  /** The values of a key made of parts (types 15, 18, 22, 23, 33); `key` is them joined. */
  key_parts: string[];
  multi_key_mode: MultiKeyMode;
  /** param_override, header_override, setting (as fields) and settings. */
  overrides: OverrideFields;
}

export const EMPTY_CHANNEL: ChannelFormValues = {
  name: '',
  type: 1,
  key: '',
  base_url: '',
  other: '',
  openai_organization: '',
  models: [],
  groups: ['default'],
  model_mapping: '',
  status_code_mapping: '',
  test_model: '',
  max_input_tokens: 0,
  auto_ban: true,
  priority: 0,
  weight: 0,
  batch: false,
  key_parts: [],
  multi_key_mode: '',
  overrides: overrideFieldsOf({}),
};

const split = (s: string) => (s ? s.split(',').filter(Boolean) : []);

/** The values of a stored channel (its key parts empty: typing them replaces the key). */
export function channelValuesOf(c: Channel): ChannelFormValues {
  return {
    name: c.name,
    type: c.type,
    key: c.key,
    base_url: c.base_url,
    other: c.other,
    openai_organization: c.openai_organization,
    models: split(c.models),
    groups: split(c.group),
    model_mapping: c.model_mapping,
    status_code_mapping: c.status_code_mapping,
    test_model: c.test_model,
    max_input_tokens: c.max_input_tokens ?? 0,
    auto_ban: c.auto_ban === 1,
    priority: c.priority,
    weight: c.weight,
    batch: false,
    key_parts: [],
    multi_key_mode: c.multi_key_mode === 'random' || c.multi_key_mode === 'polling' ? c.multi_key_mode : '',
    overrides: overrideFieldsOf(c),
  };
}

/** Whether a text is empty or a JSON object (the mappings). */
export const isJsonObject = (text: string) => {
  if (text.trim() === '') return true;
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v);
  } catch {
    return false;
  }
};

/** The key's parts as the form shows them: one input each, unless several keys go in the text area. */
export const shownKeyParts = (
  entry: ChannelTypeInfo | undefined,
  v: Pick<ChannelFormValues, 'batch' | 'multi_key_mode'>,
) => (!v.batch && !v.multi_key_mode ? keyParts(entry) : undefined);

/**
 * Editing a channel whose key comes in parts, with every part left empty: the stored key stays
 * (the form's hint says so). The form holds the stored key as it was shown, not its parts.
 */
export const keepsStoredKey = (
  v: Pick<ChannelFormValues, 'key_parts'>,
  editing: boolean,
  parts: ReturnType<typeof keyParts>,
) => editing && !!parts && !v.key_parts.some((p) => (p ?? '').trim());

/** The first error of the values in the order the form checks them, or undefined when they may be saved. */
export function channelFormError(
  v: ChannelFormValues,
  editing: boolean,
  parts: ReturnType<typeof keyParts>,
): string | undefined {
  if (!editing && (!v.name.trim() || !v.key.trim())) return tr('channelForm.pleaseFillInTheChannel');
  if (
    parts &&
    v.key &&
    !keepsStoredKey(v, editing, parts) &&
    parts.parts.some((_p, i) => !(v.key_parts[i] ?? '').trim())
  )
    return tr('channelKeys.partsIncomplete', { format: parts.parts.map((p) => p.label).join(parts.sep) });
  if (v.models.length === 0) return tr('channelForm.pleaseSelectAtLeastOne');
  if (!isJsonObject(v.model_mapping)) return tr('channelForm.theModelMappingMustBe');
  if (!isJsonObject(v.status_code_mapping)) return tr('channelForm.theStatusCodeOverrideMust');
  return overrideErrors(v.overrides)[0];
}

/** The body sent: trimmed name and key (no key keeps the stored one), no trailing slash, default group. */
export function channelBody(v: ChannelFormValues): ChannelInput {
  const body: ChannelInput = {
    name: v.name.trim(),
    type: v.type,
    base_url: v.base_url.trim().replace(/\/+$/, ''),
    other: v.other,
    openai_organization: v.openai_organization,
    models: v.models,
    groups: v.groups.length > 0 ? v.groups : ['default'],
    model_mapping: v.model_mapping,
    status_code_mapping: v.status_code_mapping,
    test_model: v.test_model,
    max_input_tokens: v.max_input_tokens,
    auto_ban: v.auto_ban ? 1 : 0,
    priority: v.priority,
    weight: v.weight,
    multi_key_mode: v.multi_key_mode,
    ...overridesBody(v.overrides),
  };
  if (v.key.trim()) body.key = v.key.trim();
  return body;
}

/**
 * What choosing another type changes: `other` becomes the new type's default unless the user
 * changed it; the key parts are emptied, and a key of parts too.
 */
export function typeChange(
  v: Pick<ChannelFormValues, 'other' | 'key'>,
  from: ChannelTypeInfo | undefined,
  to: ChannelTypeInfo | undefined,
): Pick<ChannelFormValues, 'other' | 'key_parts' | 'key'> {
  return {
    other: v.other && v.other !== defaultOther(from) ? v.other : defaultOther(to),
    key_parts: [],
    key: keyParts(to) ? '' : v.key,
  };
}

/** Whether the overrides section starts open: when the channel has any override. */
export const overridesOpen = (o: OverrideFields) =>
  !!(overridesBody(o).setting || o.param_override || o.header_override || o.settings);
