/**
 * Turning events into log entries (spec 02 section 3). Pure: the consumer stores what this
 * returns. One log per event, keyed by the event id (processing an event twice changes nothing).
 */

import { LogType } from '@aigw/proto/common/v1/common';
import type { AuditEvent, UsageEvent } from '@aigw/proto/events/v1/events';

/** A stored log entry (snake_case, as the API shows it). */
export interface LogDoc {
  id: number;
  event_id: string;
  created_at: number;
  type: number;
  channel: number;
  user_id: number;
  username: string;
  token_id: number;
  token_name: string;
  model_name: string;
  use_time: number;
  is_stream: boolean;
  prompt_tokens: number;
  completion_tokens: number;
  /** prompt + completion, stored because the database's $group cannot add fields. */
  tokens: number;
  quota: number;
  content: string;
  other: string;
  group: string;
  ip: string;
  request_id: string;
  /** Not shown in lists (LogConsumeEnabled was off); still counted in the dashboard. */
  hidden?: boolean;
  /**
   * Dashboard aggregation: 'inline' (summed into its bucket by the consumer), 'skip' (not a
   * consumption, or DataExportEnabled off); older logs: 'pending', a batch id, 'done'.
   */
  agg: string;
  /** Where the event was read: `<partition>:<offset>` (tells a redelivery from a second publish). */
  src?: string;
}

export type NewLog = Omit<LogDoc, 'id'>;

/** Usage (relay, tasks) -> a consumption (2) or error (5) log. */
export function logFromUsage(ev: UsageEvent, opts: { logConsume: boolean; aggregate: boolean }): NewLog {
  const r = ev.ratios;
  const other: Record<string, unknown> = {
    frt: Math.round(ev.firstTokenMs),
    model_ratio: r?.modelRatio ?? 0,
    completion_ratio: r?.completionRatio ?? 0,
    group_ratio: r?.groupRatio ?? 1,
    model_price: r?.modelPrice ? r.modelPrice : -1,
    admin_info: { use_channel: ev.channelsTried.length ? ev.channelsTried : [ev.channelId] },
  };
  if (ev.upstreamModelName && ev.upstreamModelName !== ev.modelName) other.upstream_model_name = ev.upstreamModelName;
  if (r?.audioRatio) other.audio_ratio = r.audioRatio;
  if (r?.audioCompletionRatio) other.audio_completion_ratio = r.audioCompletionRatio;
  if (ev.cachedTokens) other.cache_tokens = ev.cachedTokens;
  if (r?.cacheRatio) other.cache_ratio = r.cacheRatio;
  if (ev.cacheCreationTokens) other.cache_creation_tokens = ev.cacheCreationTokens;
  if (r?.cacheCreationRatio) other.cache_creation_ratio = r.cacheCreationRatio;
  if (ev.imageInputTokens) other.image_tokens = ev.imageInputTokens;
  if (r?.imageRatio) other.image_ratio = r.imageRatio;
  if (ev.audioInputTokens || ev.audioOutputTokens) {
    other.audio = true;
    other.audio_input = ev.audioInputTokens;
    other.audio_output = ev.audioOutputTokens;
    other.text_input = ev.promptTokens - ev.audioInputTokens;
    other.text_output = ev.completionTokens - ev.audioOutputTokens;
  }
  if (ev.error) {
    other.status_code = ev.statusCode;
    other.error = ev.errorMessage;
  }
  if (ev.other) {
    try {
      Object.assign(other, JSON.parse(ev.other));
    } catch {
      // malformed extras are dropped
    }
  }
  const type = ev.type || (ev.error ? LogType.ERROR : LogType.CONSUME);
  return {
    event_id: ev.eventId,
    created_at: Math.floor((ev.occurredAtMs || Date.now()) / 1000),
    type,
    channel: ev.channelId,
    user_id: ev.userId,
    username: ev.username,
    token_id: ev.tokenId,
    token_name: ev.tokenName,
    model_name: ev.modelName,
    use_time: Math.round(ev.useTimeMs / 1000),
    is_stream: ev.isStream,
    prompt_tokens: ev.promptTokens,
    completion_tokens: ev.completionTokens,
    tokens: ev.promptTokens + ev.completionTokens,
    quota: ev.quota,
    content: ev.content,
    other: JSON.stringify(other),
    group: ev.group,
    ip: ev.ip,
    request_id: ev.requestId,
    ...(type === LogType.CONSUME && !opts.logConsume ? { hidden: true } : {}),
    agg: type === LogType.CONSUME && opts.aggregate ? 'inline' : 'skip',
  };
}

/** Top-up (1), admin (3) and system (4) events -> a log. */
export function logFromAudit(ev: AuditEvent): NewLog {
  return {
    event_id: ev.eventId,
    created_at: Math.floor((ev.occurredAtMs || Date.now()) / 1000),
    type: ev.type,
    channel: 0,
    user_id: ev.userId,
    username: ev.username,
    token_id: 0,
    token_name: '',
    model_name: '',
    use_time: 0,
    is_stream: false,
    prompt_tokens: 0,
    completion_tokens: 0,
    tokens: 0,
    quota: ev.quotaDelta,
    content: ev.content,
    other: ev.actorUserId ? JSON.stringify({ admin_info: { actor_user_id: ev.actorUserId } }) : '',
    group: '',
    ip: ev.ip,
    request_id: '',
    agg: 'skip',
  };
}

/** The hour bucket (unix seconds) of a time. */
export const hourOf = (seconds: number) => Math.floor(seconds / 3600) * 3600;

export interface Bucket {
  key: string;
  user_id: number;
  username: string;
  model_name: string;
  created_at: number;
  token_used: number;
  count: number;
  quota: number;
}

/** Sums consumption logs into (user, model, hour) buckets. */
export function bucketsOf(
  logs: Pick<
    LogDoc,
    'user_id' | 'username' | 'model_name' | 'created_at' | 'prompt_tokens' | 'completion_tokens' | 'quota'
  >[],
): Bucket[] {
  const out = new Map<string, Bucket>();
  for (const l of logs) {
    const hour = hourOf(l.created_at);
    const key = bucketKey(l.user_id, l.model_name, l.created_at);
    let b = out.get(key);
    if (!b) {
      b = {
        key,
        user_id: l.user_id,
        username: l.username,
        model_name: l.model_name,
        created_at: hour,
        token_used: 0,
        count: 0,
        quota: 0,
      };
      out.set(key, b);
    }
    b.token_used += l.prompt_tokens + l.completion_tokens;
    b.count += 1;
    b.quota += l.quota;
  }
  return [...out.values()];
}

/** A consumption log to sum into its bucket, with the partition offset it was read at. */
export interface OffsetLog {
  log: Pick<
    LogDoc,
    'user_id' | 'username' | 'model_name' | 'created_at' | 'prompt_tokens' | 'completion_tokens' | 'quota'
  >;
  offset: number;
}

/** A consumption log with the partition it was read from (a batch may hold several partitions). */
export interface PartitionLog extends OffsetLog {
  partition: number;
}

/** A bucket's key: user, model and hour. */
export const bucketKey = (userId: number, model: string, createdAt: number) =>
  `${userId}:${model}:${hourOf(createdAt)}`;
