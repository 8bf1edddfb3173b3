/**
 * Which channel and user an answer the upstream keeps belongs to (OpenAI Responses with
 * store), so that GET and DELETE /v1/responses/{id} reach the same channel and only its owner.
 * In Redis, shared by the relay's replicas, for the 30 days OpenAI keeps responses.
 */
import type { Logger, Redis } from '@aigw/common';
import type { StateOwner, UpstreamStatePort } from '../domain/relay-request.ts';

const TTL_S = 30 * 24 * 3600;
const key = (id: string) => `relay:state:${id}`;

export function upstreamState(redis: Redis, logger: Logger): UpstreamStatePort {
  return {
    remember(id, owner) {
      redis
        .set(key(id), `${owner.channelId}:${owner.userId}:${owner.contextTokens ?? 0}`, 'EX', TTL_S)
        .catch((err: unknown) => {
          logger.warn({ err, id }, 'could not record the owner of a stored response');
        });
    },
    async find(id) {
      const v = await redis.get(key(id));
      if (!v) return undefined;
      // channel:user[:context tokens] (entries written before the context was kept have two fields).
      const [channelId, userId, context] = v.split(':').map(Number);
      if (!Number.isInteger(channelId) || !Number.isInteger(userId)) return undefined;
      const contextTokens = Number.isInteger(context) && (context as number) > 0 ? (context as number) : 0;
      return { channelId, userId, contextTokens } as StateOwner;
    },
    async forget(id) {
      await redis.del(key(id));
    },
  };
}
