/**
 * Where each session's channel (and, on a multi-key channel, the fingerprint of its key) is kept
 * for channel affinity (domain/channel-affinity.ts): Redis, shared by the relay's replicas, one
 * key per session with the rule's TTL. Redis being away costs the affinity, never the request. Hits and misses are counted for /metrics.
 */
import { type Logger, type OptionAccessors, type Redis, registry } from '@aigw/common';
import { Counter } from 'prom-client';
import { type AffinityRule, type AffinitySettings, DEFAULT_AFFINITY_RULES } from '../domain/channel-affinity.ts';
import type { AffinityPort } from '../domain/relay-request.ts';

const key = (k: string) => `relay:affinity:${k}`;

/** How long a request waits for its session's channel. */
const FIND_WAIT_MS = 100;

/** new-api's channel_affinity_setting.* options as settings (an empty rule list: the defaults). */
export function affinitySettings(options: Pick<OptionAccessors, 'bool' | 'number' | 'json'>): AffinitySettings {
  const rules = options.json<unknown>('channel_affinity_setting.rules');
  return {
    enabled: options.bool('channel_affinity_setting.enabled'),
    switchOnSuccess: options.bool('channel_affinity_setting.switch_on_success'),
    keepOnChannelDisabled: options.bool('channel_affinity_setting.keep_on_channel_disabled'),
    defaultTtlSeconds: options.number('channel_affinity_setting.default_ttl_seconds'),
    rules: Array.isArray(rules) && rules.length > 0 ? (rules as AffinityRule[]) : DEFAULT_AFFINITY_RULES,
  };
}

/** One counter per process (two relays in one test process share it, as they share /metrics). */
let counter: Counter<'result'> | undefined;

export function channelAffinityStore(redis: Redis, logger: Logger, settings: () => AffinitySettings): AffinityPort {
  counter ??= new Counter({
    name: 'relay_channel_affinity_total',
    help: 'Served requests of a session (channel affinity): on the channel kept for it (hit) or not (miss).',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  const hits = counter;
  return {
    settings,
    async find(k) {
      // A slow or absent Redis must not hold the request: after FIND_WAIT_MS it goes without.
      let timer: NodeJS.Timeout | undefined;
      try {
        const v = await Promise.race([
          redis.get(key(k)),
          new Promise<null>((resolve) => {
            timer = setTimeout(() => resolve(null), FIND_WAIT_MS);
          }),
        ]);
        // <channel id>[:<key fingerprint>] (the key of a multi-key channel that served it).
        const [channel, keyHash] = (v ?? '').split(':');
        const channelId = Number(channel);
        return v && Number.isInteger(channelId) && channelId > 0
          ? { channelId, keyHash: keyHash || undefined }
          : undefined;
      } catch (err) {
        logger.warn({ err }, 'channel affinity: could not read the session');
        return undefined;
      } finally {
        clearTimeout(timer);
      }
    },
    remember(k, channelId, ttlSeconds, keyHash) {
      redis
        .set(key(k), keyHash ? `${channelId}:${keyHash}` : String(channelId), 'EX', ttlSeconds)
        .catch((err: unknown) => {
          logger.warn({ err }, 'channel affinity: could not keep the session');
        });
    },
    count(result) {
      hits.inc({ result });
    },
  };
}
