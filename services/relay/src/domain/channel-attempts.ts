/**
 * A request's attempts on channels (reference-behaviour steps 3 and 6): the channel of each
 * attempt (pinned, the stored response's or session's channel first, then the group's choice),
 * another key of a multi-key channel after a bad one, retries on other channels within the
 * budget, and an `auto` token's next group once its group's channels are spent.
 */
import { groupRatioFor, keyFingerprint } from '@aigw/common';
import type { RelayMode } from './adaptors/index.ts';
import type { RoutedChannel } from './channel-index.ts';
import { type AttemptResult, runAttempt } from './exchange/attempt.ts';
import { isRetryable, shouldDisable, UpstreamFailure } from './exchange/failure.ts';
import { moveToNextGroup } from './group-walk.ts';
import { applyModelSuffix } from './protocols/model-suffix.ts';
import type { RequestRun } from './relay-request.ts';

/** What the attempts of a request came to: the channels tried, the last failure, what served it. */
export interface Attempts {
  tried: number[];
  last?: { failure: UpstreamFailure; channel: RoutedChannel };
  result?: AttemptResult;
  served?: RoutedChannel;
  /** The key of a multi-key channel that served. */
  servedKey?: string;
  /** The model name of the last attempt (model mapping and suffixes applied). */
  upstreamModel: string;
}

/** What the caller's user group pays in `group` (GroupGroupRatio, else GroupRatio). */
export function groupRatioIn(run: RequestRun, group: string): number {
  const { ratios, caller } = run;
  return groupRatioFor(caller.user.group, group, ratios.groupRatio, ratios.groupGroupRatio);
}

/**
 * Cross-group retry (an `auto` token with cross_group_retry): moves the caller to the next auto
 * group that has a channel for the model not tried (its attempts counted afresh, its ratio
 * applied); false when there is none.
 */
function nextGroup(run: RequestRun, tried: number[]): boolean {
  const { caller, index, req } = run;
  if (run.pinned || !moveToNextGroup(caller, (g) => index.select(g, req.model, 0, tried) !== undefined)) return false;
  run.groupRatio = groupRatioIn(run, caller.group);
  return true;
}

/** The channel a first attempt prefers (a stored response's or the session's), when it serves the request. */
function preferredChannel(run: RequestRun, tried: number[]): RoutedChannel | undefined {
  const { caller, index, req } = run;
  const id = caller.preferredChannelId;
  return id && !tried.includes(id) && index.serves(caller.group, req.model, id) ? index.byId(id) : undefined;
}

/**
 * A channel that cannot take the request (no usable key left, or not this mode): counted as
 * tried, its reason kept as the failure; false when it can.
 */
function skipUnusable(a: Attempts, ch: RoutedChannel, key: string | undefined, mode: RelayMode): boolean {
  if (ch.keys && key === undefined) {
    a.tried.push(ch.id);
    a.last ??= { failure: new UpstreamFailure(401, `渠道 #${ch.id} 没有可用的密钥`), channel: ch };
    return true;
  }
  if (!ch.adaptor.modes.has(mode)) {
    a.tried.push(ch.id);
    a.last = { failure: new UpstreamFailure(400, `渠道类型 ${ch.type} 不支持该接口`), channel: ch };
    return true;
  }
  return false;
}

/**
 * One attempt on a channel (with `key` on a multi-key channel): undefined when it served, else
 * its failure, reported as the channel's health.
 */
async function attemptOn(
  run: RequestRun,
  a: Attempts,
  ch: RoutedChannel,
  key: string | undefined,
): Promise<{ failure: UpstreamFailure; disable: boolean } | undefined> {
  const { deps, caller, req, sink } = run;
  // new-api's suffixes (-thinking, -high...) leave the model name for the request's reasoning.
  const attemptOf = applyModelSuffix(req, ch.adaptor, ch.target, ch.modelMapping?.[req.model] ?? req.model, run.canon);
  a.upstreamModel = attemptOf.upstreamModel;
  const t0 = performance.now();
  try {
    a.result = await runAttempt({
      req: attemptOf.req,
      adaptor: ch.adaptor,
      channel: key === undefined ? ch.target : { ...ch.target, key },
      upstreamModel: a.upstreamModel,
      canonical: attemptOf.canonical,
      upstream: deps.upstream,
      sink,
      startedAt: caller.startedAt,
      firstTokenTimeoutMs: deps.settings.firstTokenTimeoutMs(),
      estimatePrompt: run.estimatePrompt,
      countText: (text) => deps.tokenizer.count([text], req.model),
    });
    a.served = ch;
    a.servedKey = key;
    return undefined;
  } catch (err) {
    if (!(err instanceof UpstreamFailure)) throw err;
    a.last = { failure: err, channel: ch };
    const disable = shouldDisable(err);
    deps.health({
      requestId: caller.requestId,
      channelId: ch.id,
      statusCode: err.status,
      message: err.message,
      shouldDisable: disable,
      model: a.upstreamModel,
      responseTimeMs: Math.round(performance.now() - t0),
      keyHash: key === undefined ? '' : keyFingerprint(key),
    });
    return { failure: err, disable };
  }
}

/** One bad key of a multi-key channel: marked, and whether a sibling may serve this request. */
function anotherKey(ch: RoutedChannel, key: string, badKeys: Set<string>): boolean {
  badKeys.add(key);
  ch.keys?.markBad(key);
  return (ch.keys?.available(badKeys) ?? 0) > 0;
}

/**
 * Runs the attempts until one serves, the retries are spent, or the failure is not retryable.
 * `kept`: the session's channel and key (channel affinity), whose key a multi-key channel keeps.
 */
export async function attemptChannels(
  run: RequestRun,
  kept: { channelId: number; keyHash?: string } | undefined,
): Promise<Attempts> {
  const { deps, caller, req, sink, index, pinned } = run;
  const a: Attempts = { tried: [], upstreamModel: req.model };
  const retryTimes = pinned ? 0 : deps.settings.retryTimes();
  // Multi-key channels: keys that failed as unusable in this request, and the channel to try
  // again with another of its keys (that retry costs no attempt).
  const badKeys = new Set<string>();
  let sameChannel: RoutedChannel | undefined;
  for (let attempt = 0; ; attempt++) {
    const again = sameChannel;
    sameChannel = undefined;
    const ch =
      again ??
      pinned ??
      (attempt === 0 ? preferredChannel(run, a.tried) : undefined) ??
      index.select(caller.group, req.model, attempt, a.tried);
    if (!ch && a.last && !sink.aborted && isRetryable(a.last.failure) && nextGroup(run, a.tried)) {
      attempt = -1;
      continue;
    }
    if (!ch || (pinned && attempt > 0 && !again)) break;
    // A session kept on a multi-key channel keeps its key too (upstream prompt caches are per key).
    const key = ch.keys?.next(badKeys, undefined, ch.id === kept?.channelId ? kept.keyHash : undefined);
    if (skipUnusable(a, ch, key, req.mode)) {
      if (pinned) break;
      continue;
    }
    if (!again) a.tried.push(ch.id);
    const failed = await attemptOn(run, a, ch, key);
    if (!failed) break;
    const err = failed.failure;
    if (key !== undefined && failed.disable && !err.committed && !sink.aborted && anotherKey(ch, key, badKeys)) {
      sameChannel = ch;
      attempt--;
      continue;
    }
    const budget = err.kind === 'first_token_timeout' ? Math.max(retryTimes, 1) : retryTimes;
    if (pinned || sink.aborted || !isRetryable(err)) break;
    if (attempt >= budget) {
      // The group's retries are spent: the next auto group, when the token allows it.
      if (!err.committed && nextGroup(run, a.tried)) {
        attempt = -1;
        continue;
      }
      break;
    }
  }
  return a;
}
