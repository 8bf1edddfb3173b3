/**
 * The relay pipeline for one authorised request (reference-behaviour steps 3-10): price,
 * pre-consume (skipped when the balances are ample), channel choice with retries on other
 * channels, the upstream exchange, settle or refund, channel-health and usage events.
 */
import { groupRatioFor, keyFingerprint } from '@aigw/common';
import { LogType } from '@aigw/proto/common/v1/common';
import type { RelayMode } from './adaptors/index.ts';
import { hasBudget, quotaRefusalCode, type TokenInfo, type UserInfo } from './authorize.ts';
import type { AffinityKey, AffinitySettings } from './channel-affinity.ts';
import { type Attempts, attemptChannels } from './channel-attempts.ts';
import type { ChannelIndex, RoutedChannel } from './channel-index.ts';
import type { AttemptResult } from './exchange/attempt.ts';
import { type ClientRequest, canonicalChat } from './exchange/build-request.ts';
import { mapStatus, UpstreamFailure } from './exchange/failure.ts';
import type { ClientSink, UpstreamClient } from './exchange/ports.ts';
import { billingSourceDetails } from './group-walk.ts';
import { mediaUpperTokens } from './media-estimate.ts';
import {
  PROMPT_ESTIMATE_MARGIN,
  type Price,
  preConsumeAmount,
  priceAt,
  priceOf,
  type Ratios,
  settleQuota,
  tierDetails,
} from './pricing.ts';
import type { ChatRequest, Json, Usage } from './protocols/openai.ts';
import { errorBody } from './protocols/registry.ts';
import { preConsumeFailed, RelayError } from './relay-error.ts';
import { chatPromptParts, inputTexts, promptUpperBound, type TokenCounter } from './token-estimate.ts';
import type { SliceTicket } from './wallet-slices.ts';

/** Who is calling and in which group (after the checks of authorize.ts). */
export interface RelayCaller {
  requestId: string;
  user: UserInfo;
  /** Absent for the playground (session auth). */
  token?: TokenInfo;
  group: string;
  /**
   * An `auto` token: the auto groups it may walk, in order (`group` is the one chosen). With
   * crossGroupRetry, a request whose channels in `group` all failed goes on in the next one.
   */
  autoGroups?: string[];
  crossGroupRetry?: boolean;
  pinnedChannelId: number;
  /**
   * The channel to try first when it serves the group and model (the one holding the
   * conversation a Responses request continues); retries go elsewhere as usual.
   */
  preferredChannelId?: number;
  /** The session the request belongs to (channel affinity), when a rule names one. */
  affinity?: AffinityKey;
  ip: string;
  /** performance.now() at arrival. */
  startedAt: number;
  /**
   * Prompt and answer tokens of the stored response a Responses request continues
   * (previous_response_id): the upstream reads them again as prompt, so they are reserved too.
   */
  contextTokens?: number;
}

/** The billing side: each call idempotent by request id. */
export interface WalletPort {
  preConsume(req: {
    requestId: string;
    userId: number;
    tokenId: number;
    amount: number;
    /** The model and group: billing chooses a subscription bound to them, or the wallet. */
    model?: string;
    group?: string;
    /** Set by the process (its lease age, ms): billing uses it once the lease lapses. */
    leaseAgeMs?: number;
    /** A wallet slice of this process (domain/wallet-slices.ts): the wallet only, no token. */
    walletSlice?: boolean;
    /** A wallet slice's least size: billing grants `amount` or less down to it (`preConsumed`). */
    sliceMin?: number;
  }): Promise<{
    preConsumed?: number;
    userQuota: number;
    tokenRemainQuota: number;
    subscriptionId?: string;
    subscriptionActive?: boolean;
  }>;
  /** Best effort: a refund that fails is made by billing from the request's error usage event. */
  refund(requestId: string, userId: number): Promise<void>;
}

/** Reservations drawn from wallet slices this process holds (domain/wallet-slices.ts). */
export interface SlicePort {
  /** Draws `need` for the request from one of the user's slices; undefined: it pre-consumes. */
  reserve(requestId: string, userId: number, need: number): Promise<SliceTicket | undefined>;
  /** The request ended, charged `charged` (0: failed), after its usage event was queued. */
  finish(ticket: SliceTicket, charged: number): void;
  /** The balance a per-request pre-consume answered. */
  observe(userId: number, userQuota: number): void;
}

/** A request served without a pre-consume, counted until billing has surely settled it. */
export type SkipTicket = object;

/**
 * What the relay knows of balances between calls, to skip pre-consume when both the user and
 * the token hold far more than a request can cost.
 */
export interface BalancePort {
  ample(userId: number, token: TokenInfo | undefined, need: number): boolean;
  /** Counts `amount` (the request's upper bound) as spent without a pre-consume. */
  hold(userId: number, amount: number, token: TokenInfo | undefined): SkipTicket;
  /** The request finished and was charged `charged` (0: failed, nothing to settle). */
  release(ticket: SkipTicket, charged: number): void;
  /** Records a user quota billing answered (pre-consume answers) for a call sent at `at` (Date.now()). */
  observe(userId: number, userQuota: number, at: number, subscriptionActive?: boolean): void;
  spent(token: TokenInfo | undefined, quota: number): void;
}

export interface UsageRecord {
  requestId: string;
  caller: RelayCaller;
  model: string;
  upstreamModel: string;
  channelId: number;
  channelsTried: number[];
  usage: Usage;
  quota: number;
  useTimeMs: number;
  firstTokenMs: number;
  isStream: boolean;
  type: LogType.CONSUME | LogType.ERROR;
  statusCode: number;
  errorMessage: string;
  price: Price | undefined;
  groupRatio: number;
  other: Json;
  /** The wallet slice the request's reservation was drawn from (billing charges it from there). */
  walletSlice?: string;
}

export interface HealthRecord {
  requestId: string;
  channelId: number;
  statusCode: number;
  message: string;
  shouldDisable: boolean;
  model: string;
  responseTimeMs: number;
  /** Multi-key channels: keyFingerprint of the key that failed ('' otherwise). */
  keyHash: string;
}

export interface RelaySettings {
  retryTimes(): number;
  preConsumedQuota(): number;
  quotaPerUnit(): number;
  firstTokenTimeoutMs(): number;
  /** The most completion tokens `model` can answer (reserved when a request gives no max_tokens). */
  outputLimit(model: string): number;
  /** The model ratio of models without a price, when the admin serves them (else they are refused). */
  unpricedModelRatio?(): number | undefined;
}

/** Who owns an answer the upstream keeps (by its id): the channel that made it and the user. */
export interface StateOwner {
  channelId: number;
  userId: number;
  /** Prompt and answer tokens of the stored response (the context a continuation reads again). */
  contextTokens?: number;
}

/** Where the owners of stored upstream answers are kept (Redis; see data/upstream-state.ts). */
export interface UpstreamStatePort {
  /** Best effort, not awaited. */
  remember(id: string, owner: StateOwner): void;
  find(id: string): Promise<StateOwner | undefined>;
  forget(id: string): Promise<void>;
}

/** Where sessions' channels are kept (Redis; data/channel-affinity-store.ts). */
export interface AffinityPort {
  settings(): AffinitySettings;
  /**
   * The channel that served the session last and, on a multi-key channel, the keyFingerprint of
   * its key; undefined when none (or Redis is away).
   */
  find(key: string): Promise<{ channelId: number; keyHash?: string } | undefined>;
  /** Best effort, not awaited. */
  remember(key: string, channelId: number, ttlSeconds: number, keyHash?: string): void;
  /** A served request of a session: on the channel kept for it (hit) or not (miss). */
  count(result: 'hit' | 'miss'): void;
}

export interface RelayDeps {
  upstream: UpstreamClient;
  channels(): ChannelIndex;
  ratios(): Ratios;
  settings: RelaySettings;
  wallet: WalletPort;
  balances: BalancePort;
  /** Wallet slices (RELAY_WALLET_SLICES; absent: every reservation is its own pre-consume). */
  slices?: SlicePort;
  tokenizer: TokenCounter;
  usage(rec: UsageRecord): void;
  health(rec: HealthRecord): void;
  /** Tokens/min accounting for rate limits (after the request). */
  countTokens?(caller: RelayCaller, tokens: number): void;
  /** Owners of the answers upstreams keep (absent: retrieve and delete find nothing). */
  state?: UpstreamStatePort;
  /** Channel affinity (absent: none). */
  affinity?: AffinityPort;
}

/** The result the HTTP layer may use (tests, metrics). */
export interface RelayOutcome {
  ok: boolean;
  quota: number;
  channelId: number;
  status: number;
}

/** Modes whose answer is priced by completion tokens. */
const GENERATIVE = new Set<RelayMode>(['chat', 'completions']);

function maxTokensOf(req: ClientRequest): number {
  if (req.body instanceof FormData) return 0;
  const b = req.body as Json;
  const gen = (b.generationConfig ?? {}) as Json;
  const v = b.max_completion_tokens ?? b.max_tokens ?? b.max_output_tokens ?? gen.maxOutputTokens;
  return typeof v === 'number' && v > 0 ? v : 0;
}

/** Whether a mode's answer is priced per image made (`data.length`, `n` asked). */
export const imageMode = (mode: RelayMode) =>
  mode === 'images' || mode === 'image_edits' || mode === 'image_variations';

function unitsOf(req: ClientRequest): number {
  if (!imageMode(req.mode)) return 1;
  // An edit or a variation comes as multipart: its n is a text field.
  const raw = req.body instanceof FormData ? req.body.get('n') : (req.body as Json).n;
  const n = Number(typeof raw === 'string' || typeof raw === 'number' ? raw : 1);
  return Number.isInteger(n) && n > 0 ? n : 1;
}

/**
 * Runs the pipeline; the answer (or the error) is written to `sink`. The answer's last bytes wait
 * for the usage event (ClientOutput.holdEnd): a relay killed after the client saw its answer
 * complete has always spooled the charge (the fault suite's relay scenario lost one otherwise).
 */
export async function relayRequest(
  deps: RelayDeps,
  caller: RelayCaller,
  req: ClientRequest,
  sink: ClientSink,
): Promise<RelayOutcome> {
  sink.holdEnd?.();
  try {
    return await runPipeline(deps, caller, req, sink);
  } finally {
    sink.releaseEnd?.();
  }
}

/** One request's run through the pipeline: its price, channels and estimates (built once). */
export interface RequestRun {
  deps: RelayDeps;
  caller: RelayCaller;
  req: ClientRequest;
  sink: ClientSink;
  ratios: Ratios;
  price: Price;
  /** What the caller's user group pays in the group used (changes with an `auto` token's walk). */
  groupRatio: number;
  index: ChannelIndex;
  quotaPerUnit: number;
  /** The channel an admin's key pins (`sk-KEY-CHANNELID`). */
  pinned: RoutedChannel | undefined;
  /** The request in the canonical chat form, made at most once. */
  canon(): ChatRequest;
  /** The prompt's token estimate, computed at most once, only when needed (pre-consume or no upstream usage). */
  estimatePrompt(): Promise<number>;
}

/** The request's price and channels; refuses a pinned channel that is missing or disabled, or a model without channel. */
function requestRun(deps: RelayDeps, caller: RelayCaller, req: ClientRequest, sink: ClientSink): RequestRun {
  const ratios = deps.ratios();
  const price = priceOf(ratios, req.model, deps.settings.unpricedModelRatio?.());
  const groupRatio = groupRatioFor(caller.user.group, caller.group, ratios.groupRatio, ratios.groupGroupRatio);
  const index = deps.channels();
  const quotaPerUnit = deps.settings.quotaPerUnit();
  let pinned: RoutedChannel | undefined;
  if (caller.pinnedChannelId) {
    pinned = index.byId(caller.pinnedChannelId);
    if (!pinned) throw new RelayError(404, `渠道 #${caller.pinnedChannelId} 不存在`, 'channel_not_found');
    if (pinned.status !== 1) throw new RelayError(403, '该渠道已被禁用', 'channel_disabled');
  } else if (!index.has(caller.group, req.model)) {
    throw new RelayError(503, `当前分组 ${caller.group} 下对于模型 ${req.model} 无可用渠道`, 'model_not_found');
  }
  let canonical: ChatRequest | undefined;
  const canon = () => {
    canonical ??= canonicalChat(req);
    return canonical;
  };
  let promptEstimate: Promise<number> | undefined;
  const estimatePrompt = () => {
    promptEstimate ??= estimate(deps.tokenizer, req, canon);
    return promptEstimate;
  };
  return { deps, caller, req, sink, ratios, price, groupRatio, index, quotaPerUnit, pinned, canon, estimatePrompt };
}

/** What step 5 reserved: the amount pre-consumed (0 when skipped), who pays, the skip's ticket. */
interface Reservation {
  reserved: number;
  /** The user subscription billing chose to pay the request ('' the wallet): on the log row. */
  paidBy: string;
  skip: SkipTicket | undefined;
  /** Drawn from a wallet slice (then `reserved` is 0: the slice holds it). */
  slice?: SliceTicket;
}

/**
 * Step 5, pre-consume: the reservation of the prompt's estimate (at the tier of the estimate, or
 * a dearer one its margin reaches) and the answer's limit. A refusal passes billing's message on.
 */
async function preConsume(run: RequestRun, maxTokens: number, units: number): Promise<Reservation> {
  const { deps, caller, req, price, groupRatio, quotaPerUnit } = run;
  const userId = caller.user.id;
  // Media and a stored conversation cost more upstream than the text estimate sees: reserved at
  // their upper bounds (media-estimate.ts).
  const estimated =
    (await run.estimatePrompt()) + (req.mode === 'chat' ? mediaUpperTokens(req.body) : 0) + (caller.contextTokens ?? 0);
  const preConsumed = deps.settings.preConsumedQuota();
  const amount = preConsumeAmount(price, groupRatio, quotaPerUnit, estimated, preConsumed, maxTokens, units, [
    estimated,
    Math.ceil(estimated * PROMPT_ESTIMATE_MARGIN),
  ]);
  const sentAt = Date.now();
  try {
    const tokenId = caller.token?.id ?? 0;
    const hold = { requestId: caller.requestId, userId, tokenId, amount, model: req.model, group: caller.group };
    const res = await deps.wallet.preConsume(hold);
    deps.balances.observe(userId, res.userQuota, sentAt, res.subscriptionActive);
    deps.slices?.observe(userId, res.userQuota);
    return { reserved: amount, paidBy: res.subscriptionId ?? '', skip: undefined };
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'FAILED_PRECONDITION') {
      // Billing's message already names what ran out (用户额度不足 or 令牌额度不足): pass it on as is.
      const message = (err as Error).message || '用户额度不足';
      const kind = quotaRefusalCode(message);
      throw new RelayError(403, message, kind);
    }
    if (code === 'NOT_FOUND') throw new RelayError(401, '无效的令牌', 'invalid_token');
    // The hold may still be applied after we stopped waiting: refund it now, and durably
    // through the error usage event (billing refunds from it; a hold arriving later is refused).
    const refusal = preConsumeFailed(err);
    void deps.wallet.refund(caller.requestId, userId);
    deps.usage(preConsumeFailure(caller, req, price, groupRatio, refusal));
    throw refusal;
  }
}

/**
 * Step 5 on the slice path: the request's bound (with the media upper bounds the pre-consume adds)
 * drawn from a wallet slice, for callers whose holds are on the wallet alone (no token limit or
 * budget; billing refuses a slice to a user a subscription may pay); else its own pre-consume.
 */
async function reserve(run: RequestRun, maxTokens: number, units: number): Promise<Reservation> {
  const { deps, caller, req } = run;
  const t = caller.token;
  if (deps.slices && (!t || (t.unlimitedQuota && !hasBudget(t)))) {
    const media = req.mode === 'chat' ? mediaUpperTokens(req.body) : 0;
    const need = reservationBound(run, maxTokens, units, media);
    const slice = await deps.slices.reserve(caller.requestId, caller.user.id, need);
    if (slice) return { reserved: 0, paidBy: '', skip: undefined, slice };
  }
  return preConsume(run, maxTokens, units);
}

/** The upper bound of what a request can cost: the dearest tier a prompt up to its upper bound can fall in. */
function reservationBound(run: RequestRun, maxTokens: number, units: number, extraPrompt = 0): number {
  const { req, caller, price, groupRatio, quotaPerUnit } = run;
  const bodyBytes = req.raw?.length ?? 4096;
  const upper = promptUpperBound(bodyBytes) + (caller.contextTokens ?? 0) + extraPrompt;
  return preConsumeAmount(
    price,
    groupRatio,
    quotaPerUnit,
    upper,
    run.deps.settings.preConsumedQuota(),
    maxTokens,
    units,
    [0, upper],
  );
}

/** A request's usage event, one flat literal per outcome (no object spreads: they were a visible share of the CPU). */
function usageRecord(
  run: RequestRun,
  a: Attempts,
  useTimeMs: number,
  channelId: number,
  usage: UsageRecord['usage'],
  quota: number,
  firstTokenMs: number,
  type: LogType.CONSUME | LogType.ERROR,
  statusCode: number,
  errorMessage: string,
  other: Json,
  priced: Price = run.price,
): UsageRecord {
  return {
    requestId: run.caller.requestId,
    caller: run.caller,
    model: run.req.model,
    upstreamModel: a.upstreamModel,
    channelId,
    channelsTried: a.tried,
    usage,
    quota,
    useTimeMs,
    firstTokenMs,
    isStream: run.req.stream,
    type,
    statusCode,
    errorMessage,
    price: priced,
    groupRatio: run.groupRatio,
    other,
  };
}

/** Steps 6-7: a failed request refunds what it reserved and answers the last failure (its status may be rewritten). */
function failRequest(run: RequestRun, a: Attempts, r: Reservation, useTimeMs: number): RelayOutcome {
  const { deps, caller, req, sink } = run;
  if (r.skip) deps.balances.release(r.skip, 0);
  // Its error event names no slice: billing records the request closed, the slice keeps the bound.
  if (r.slice) deps.slices?.finish(r.slice, 0);
  // Not awaited: the error usage event below makes billing refund it if this call fails.
  if (r.reserved) void deps.wallet.refund(caller.requestId, caller.user.id);
  const last = a.last;
  const failure =
    last?.failure ?? new UpstreamFailure(503, `当前分组 ${caller.group} 下对于模型 ${req.model} 无可用渠道`);
  let status = failure.status || (failure.kind === 'first_token_timeout' ? 504 : 502);
  status = mapStatus(status, last?.channel.statusCodeMapping);
  const message = failure.message;
  if (!sink.started && !sink.aborted) {
    sink.head(status, { 'content-type': 'application/json' });
    sink.end(JSON.stringify(errorBody(req.format, status, message, 'upstream_error')));
  }
  const none = { promptTokens: 0, completionTokens: 0 };
  deps.usage(usageRecord(run, a, useTimeMs, last?.channel.id ?? 0, none, 0, 0, 5, status, message, {}));
  return { ok: false, quota: 0, channelId: last?.channel.id ?? 0, status };
}

type Served = Attempts & { result: AttemptResult; served: RoutedChannel };

const wasServed = (a: Attempts): a is Served => a.result !== undefined && a.served !== undefined;

/** Step 9: settles a served request (the client already has its answer), keeps its state and session. */
function settleRequest(
  run: RequestRun,
  a: Served,
  r: Reservation,
  useTimeMs: number,
  units: number,
  session: { key: AffinityKey; kept: number | undefined } | undefined,
): RelayOutcome {
  const { deps, caller, req, price, index } = run;
  const { result, served } = a;
  const quota = settleQuota(
    price,
    run.groupRatio,
    run.quotaPerUnit,
    result.usage,
    imageMode(req.mode) ? result.units || units : 1,
  );
  if (r.skip) deps.balances.release(r.skip, quota);
  deps.balances.spent(caller.token, quota);
  deps.countTokens?.(caller, result.usage.promptTokens + result.usage.completionTokens);
  const other: Json = {};
  // new-api's other.billing_source: billing settles this request against that subscription.
  billingSourceDetails(other, r.paidBy);
  if (result.aborted) other.client_aborted = true;
  if (result.estimated) other.usage_estimated = true;
  // The long-context tier of the upstream's prompt count: its ratios on the row, and which it was.
  const settled = priceAt(price, result.usage.promptTokens);
  tierDetails(other, settled);
  cacheWriteDetails(other, result.usage, settled);
  if (result.stateId)
    deps.state?.remember(result.stateId, {
      channelId: served.id,
      userId: caller.user.id,
      contextTokens: result.usage.promptTokens + result.usage.completionTokens,
    });
  if (session && deps.affinity) {
    const kept = session.kept;
    keepSession(
      deps.affinity,
      session.key,
      kept,
      served.id,
      () => index.serves(caller.group, req.model, kept ?? 0),
      a.servedKey === undefined ? undefined : keyFingerprint(a.servedKey),
    );
  }
  const rec = usageRecord(
    run,
    a,
    useTimeMs,
    served.id,
    result.usage,
    quota,
    result.firstTokenMs,
    2,
    200,
    '',
    other,
    settled,
  );
  if (r.slice) rec.walletSlice = r.slice.slice.id;
  deps.usage(rec);
  // After its event is queued: the slice's release, when this ends it, goes behind it.
  if (r.slice) deps.slices?.finish(r.slice, quota);
  // The billing service settles from this usage event (idempotent by request id): no call per
  // request here, and the settle survives this process.
  return { ok: true, quota, channelId: served.id, status: 200 };
}

async function runPipeline(
  deps: RelayDeps,
  caller: RelayCaller,
  req: ClientRequest,
  sink: ClientSink,
): Promise<RelayOutcome> {
  const run = requestRun(deps, caller, req, sink);
  // Step 5: pre-consume, unless the balances are far above what this request can cost.
  // Without max_tokens an answer can be as long as the model allows: reserve for that.
  const maxTokens = maxTokensOf(req) || (GENERATIVE.has(req.mode) ? deps.settings.outputLimit(req.model) : 0);
  const units = unitsOf(req);
  const bound = reservationBound(run, maxTokens, units);
  const reservation: Reservation = deps.balances.ample(caller.user.id, caller.token, bound)
    ? { reserved: 0, paidBy: '', skip: deps.balances.hold(caller.user.id, bound, caller.token) }
    : await reserve(run, maxTokens, units);
  try {
    return await serve(run, reservation, units);
  } catch (err) {
    // Never left drawn: a request that threw gives its bound back to the slice (nothing was charged).
    if (reservation.slice) deps.slices?.finish(reservation.slice, 0);
    throw err;
  }
}

/** Steps 3 and 6-9 once reserved: channel affinity, attempts, then settle or refund. */
async function serve(run: RequestRun, reservation: Reservation, units: number): Promise<RelayOutcome> {
  const { deps, caller } = run;

  // Channel affinity: the session's channel goes first while it serves the model (retries go
  // elsewhere as usual); a stored response's channel (previous_response_id) comes before it.
  const session = run.pinned ? undefined : caller.affinity;
  const keptSession = session && deps.affinity ? await deps.affinity.find(session.key) : undefined;
  const kept = keptSession?.channelId;
  if (kept && !caller.preferredChannelId) caller.preferredChannelId = kept;

  // Step 3 and 6: attempts on channels, retries on others.
  const a = await attemptChannels(run, keptSession);
  const useTimeMs = Math.round(performance.now() - caller.startedAt);
  if (!wasServed(a)) return failRequest(run, a, reservation, useTimeMs);
  return settleRequest(run, a, reservation, useTimeMs, units, session && { key: session, kept });
}

/**
 * Where a served session goes next: the same channel (its TTL renewed); another that served it
 * after the kept one failed (switch_on_success), unless the kept one is disabled and
 * keep_on_channel_disabled holds the session for it.
 */
function keepSession(
  port: AffinityPort,
  session: AffinityKey,
  kept: number | undefined,
  servedId: number,
  keptServes: () => boolean,
  keyHash?: string,
): void {
  const hit = kept === servedId;
  port.count(hit ? 'hit' : 'miss');
  if (!hit && kept !== undefined) {
    const s = port.settings();
    if (!s.switchOnSuccess) return;
    if (s.keepOnChannelDisabled && !keptServes()) return;
  }
  port.remember(session.key, servedId, session.ttlSeconds, keyHash);
}

/**
 * Cache writes by lifetime on the log row, with new-api's names (the event carries the total and
 * the 5-minute ratio): written only when some were for an hour.
 */
function cacheWriteDetails(other: Json, usage: Usage, price: Price): void {
  const hour = usage.cacheCreation1hTokens ?? 0;
  if (!hour || !usage.cacheCreationTokens || price.kind !== 'ratio') return;
  const round = (n: number) => Math.round(n * 1e6) / 1e6;
  other.cache_creation_tokens_5m = usage.cacheCreationTokens - hour;
  other.cache_creation_ratio_5m = round(price.cacheCreationRatio);
  other.cache_creation_tokens_1h = hour;
  other.cache_creation_ratio_1h = round(price.cacheCreation1hRatio);
}

/** The error usage event of a request whose pre-consume did not answer (billing refunds from it). */
function preConsumeFailure(
  caller: RelayCaller,
  req: ClientRequest,
  price: Price,
  groupRatio: number,
  refusal: RelayError,
): UsageRecord {
  return {
    requestId: caller.requestId,
    caller,
    model: req.model,
    upstreamModel: req.model,
    channelId: 0,
    channelsTried: [],
    usage: { promptTokens: 0, completionTokens: 0 },
    quota: 0,
    useTimeMs: Math.round(performance.now() - caller.startedAt),
    firstTokenMs: 0,
    isStream: req.stream,
    type: LogType.ERROR,
    statusCode: refusal.status,
    errorMessage: refusal.message,
    price,
    groupRatio,
    other: {},
  };
}

async function estimate(tokenizer: TokenCounter, req: ClientRequest, canon: () => ChatRequest): Promise<number> {
  if (req.body instanceof FormData) return 0;
  const body = req.body as Json;
  switch (req.mode as RelayMode) {
    case 'chat': {
      const { texts, fixed } = chatPromptParts(canon());
      return fixed + (await tokenizer.count(texts, req.model));
    }
    case 'completions':
      return tokenizer.count(inputTexts(body.prompt), req.model);
    case 'embeddings':
    case 'moderations':
      return tokenizer.count(inputTexts(body.input), req.model);
    case 'speech':
      return String(body.input ?? '').length;
    case 'rerank':
      return tokenizer.count([String(body.query ?? ''), ...inputTexts(body.documents)], req.model);
    case 'images':
      return tokenizer.count([String(body.prompt ?? '')], req.model);
    default:
      return 0;
  }
}
