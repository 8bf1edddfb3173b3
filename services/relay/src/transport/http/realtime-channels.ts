/**
 * The channel of a Realtime session: one whose upstream speaks the Realtime API; another when it
 * cannot be reached, and, for an auto token with cross_group_retry, the next auto group when
 * none in this one can (the HTTP pipeline's walk: group-walk.ts).
 */
import type { RoutedChannel } from '../../domain/channel-index.ts';
import { shouldDisable, UpstreamFailure } from '../../domain/exchange/failure.ts';
import { moveToNextGroup } from '../../domain/group-walk.ts';
import { REALTIME_TYPES } from '../../domain/realtime.ts';
import { RelayError } from '../../domain/relay-error.ts';
import type { RelayDeps } from '../../domain/relay-request.ts';
import { type RealtimeSession, sessionGroupRatio } from './realtime-session.ts';
import type { Upstream } from './realtime-upstream.ts';

/**
 * Opens the session's upstream (filling its tried channels, channel and upstream model); throws
 * the last failure, or 503 when no channel serves the model. `gone`: the client left meanwhile.
 */
export async function openRealtimeChannel(
  p: RelayDeps,
  s: RealtimeSession,
  connect: (ch: RoutedChannel, upstreamModel: string) => Promise<Upstream>,
  gone: () => boolean,
): Promise<Upstream> {
  const { caller, model, tried } = s;
  const pinnedId = caller.pinnedChannelId;
  const index = p.channels();
  let last: UpstreamFailure | undefined;
  const retryTimes = pinnedId ? 0 : p.settings.retryTimes();
  // Channels of other types are skipped without using up an attempt.
  for (let attempt = 0; ; ) {
    const ch = pinnedId
      ? tried.length === 0
        ? index.byId(pinnedId)
        : undefined
      : attempt <= retryTimes
        ? index.select(caller.group, model, attempt, tried)
        : undefined;
    if (!ch) {
      const next =
        !pinnedId && !gone() && moveToNextGroup(caller, (g) => index.select(g, model, 0, tried) !== undefined);
      if (!next) break;
      s.groupRatio = sessionGroupRatio(s, caller.group);
      attempt = 0;
      continue;
    }
    tried.push(ch.id);
    if (!REALTIME_TYPES.has(ch.type) || ch.status !== 1) {
      last = new UpstreamFailure(400, `渠道类型 ${ch.type} 不支持 Realtime API`);
      continue;
    }
    attempt++;
    s.upstreamModel = ch.modelMapping?.[model] ?? model;
    const t0 = performance.now();
    try {
      const upstream = await connect(ch, s.upstreamModel);
      s.channelId = ch.id;
      return upstream;
    } catch (err) {
      if (!(err instanceof UpstreamFailure)) throw err;
      last = err;
      p.health({
        requestId: s.requestId,
        channelId: ch.id,
        statusCode: err.status,
        message: err.message,
        shouldDisable: shouldDisable(err),
        // The channel as a whole (realtime sessions do not pick among a multi-key channel's keys).
        keyHash: '',
        model: s.upstreamModel,
        responseTimeMs: Math.round(performance.now() - t0),
      });
    }
  }
  if (last) throw new RelayError(last.status >= 400 ? last.status : 502, last.message, 'upstream_error');
  throw new RelayError(503, `当前分组 ${caller.group} 下对于模型 ${model} 无可用渠道`, 'model_not_found');
}
