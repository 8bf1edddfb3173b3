import type { Page } from './admin-user.ts';
import { type RequestOptions, request } from './request.ts';

/** A channel as /api/channel answers it (spec 01 section 3). */
export interface Channel {
  id: number;
  name: string;
  type: number;
  key: string;
  openai_organization: string;
  max_input_tokens: number;
  base_url: string;
  other: string;
  model_mapping: string;
  status_code_mapping: string;
  models: string;
  group: string;
  auto_ban: number;
  test_model: string;
  status: number;
  response_time: number;
  used_quota: number;
  balance: number;
  priority: number;
  weight: number;
  other_info: string;
  created_time: number;
  test_time: number;
  balance_updated_time: number;
  tag: string;
  /** '' one key; 'random' or 'polling' when the key holds one key per line. */
  multi_key_mode?: string;
  /** Multi-key channels: JSON {size, disabled: [{index, reason, time, status}]}. */
  multi_key_status?: string;
  /** Overrides (new-api's channel fields), JSON text or ''. */
  param_override?: string;
  header_override?: string;
  setting?: string;
  settings?: string;
}

/** One key of a multi-key channel (POST /api/channel/multi_key/manage, get_key_status). */
export interface KeyStatus {
  /** 0-based line. */
  index: number;
  /** 1 enabled, 2 manually disabled, 3 auto-disabled. */
  status: number;
  disabled_time: number;
  reason: string;
  key_preview: string;
}

export interface KeyStatusPage {
  keys: KeyStatus[];
  total: number;
  page: number;
  page_size: number;
  total_pages: number;
  enabled_count: number;
  manual_disabled_count: number;
  auto_disabled_count: number;
}

export type KeyAction =
  | 'disable_key'
  | 'enable_key'
  | 'delete_key'
  | 'enable_all_keys'
  | 'disable_all_keys'
  | 'delete_disabled_keys';

export const keyStatuses = (channelId: number, page: number, pageSize: number) =>
  request<KeyStatusPage>('POST', '/api/channel/multi_key/manage', {
    body: { channel_id: channelId, action: 'get_key_status', page, page_size: pageSize },
  });

export const manageKey = (channelId: number, action: KeyAction, keyIndex?: number) =>
  request<number | undefined>('POST', '/api/channel/multi_key/manage', {
    body: { channel_id: channelId, action, key_index: keyIndex },
  });

/** What the form sends: the API's fields, models and groups as arrays or comma lists. */
export type ChannelInput = Partial<Omit<Channel, 'models' | 'group'>> & {
  models?: string | string[];
  groups?: string[];
  group?: string;
  batch?: boolean;
};

export const listChannels = (p: number, pageSize: number, idSort: boolean) =>
  request<Page<Channel>>('GET', '/api/channel/', { params: { p, page_size: pageSize, id_sort: idSort } });

export const searchChannels = (
  q: { keyword: string; group: string; model: string },
  p: number,
  pageSize: number,
  idSort: boolean,
) =>
  request<Page<Channel>>('GET', '/api/channel/search', { params: { ...q, p, page_size: pageSize, id_sort: idSort } });

export const getChannel = (id: number, options?: RequestOptions) =>
  request<Channel>('GET', `/api/channel/${id}`, options);

export const createChannel = (body: ChannelInput) => request<number[]>('POST', '/api/channel/', { body });

export const updateChannel = (body: ChannelInput & { id: number }, options?: RequestOptions) =>
  request<Channel>('PUT', '/api/channel/', { ...options, body });

export const deleteChannel = (id: number) => request<null>('DELETE', `/api/channel/${id}/`);

export const deleteDisabledChannels = () => request<number>('DELETE', '/api/channel/disabled');

export const deleteChannels = (ids: number[]) => request<number>('POST', '/api/channel/batch', { body: { ids } });

export const fixAbilities = () => request<number>('POST', '/api/channel/fix');

/** GET /api/channel/test/{id}: {success, message, time} (seconds) at the top level. */
export const testChannel = (id: number, model = '') =>
  request<{ time: number }>('GET', `/api/channel/test/${id}`, {
    params: { model: model || undefined },
    toast: false,
  }) as Promise<{
    success: boolean;
    message: string;
    data?: { time: number };
  }>;

export const testAllChannels = () => request<number>('GET', '/api/channel/test');

export const updateChannelBalance = (id: number) =>
  request<{ balance: number }>('GET', `/api/channel/update_balance/${id}/`);

export const updateAllBalances = () => request<number>('GET', '/api/channel/update_balance');

export const fetchChannelModels = (id: number) => request<string[]>('GET', `/api/channel/fetch_models/${id}`);

export const fetchUpstreamModels = (body: { type: number; base_url: string; key: string }) =>
  request<string[]>('POST', '/api/channel/fetch_models', { body });

/** A text of the channel-type catalogue in the console's two languages. */
export interface CatalogueText {
  zh: string;
  en: string;
}

/** One entry of GET /api/channel/types (services/common/src/channel-catalogue.ts). */
export interface ChannelTypeInfo {
  type: number;
  name: string;
  name_en: string;
  color: string;
  base_url: string;
  served_by: 'relay' | 'tasks';
  key_hint: CatalogueText | null;
  key_parts: {
    sep: string;
    parts: { name: string; label: CatalogueText; placeholder: CatalogueText; secret: boolean }[];
  } | null;
  other: { label: CatalogueText; hint: CatalogueText | null; default: string } | null;
  form: {
    base_url_label: CatalogueText | null;
    base_url_placeholder: CatalogueText | null;
    openai_organization: boolean;
    single_key: boolean;
  };
  models: string[];
}

/** GET /api/channel/types: the channel-type catalogue, in the type picker's order. */
export const channelTypes = () => request<ChannelTypeInfo[]>('GET', '/api/channel/types');

/** GET /api/models: channel type -> model names. */
export const modelsByType = () => request<Record<string, string[]>>('GET', '/api/models');

/** GET /api/channel/models: models offered by enabled channels. */
export const enabledModels = () => request<string[]>('GET', '/api/channel/models');
