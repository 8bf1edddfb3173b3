/**
 * Quota arithmetic of reference-behaviour steps 5 and 9. Models are priced either by ratio
 * (1 = $0.002 per 1K tokens) or per call (dollars); the group ratio multiplies both.
 */
import { lookupModel } from '@aigw/common';
import type { Usage } from './protocols/openai.ts';
import { RelayError } from './relay-error.ts';

export interface Ratios {
  modelRatio: Record<string, number>;
  completionRatio: Record<string, number>;
  modelPrice: Record<string, number>;
  groupRatio: Record<string, number>;
  /** Cached prompt tokens (cache reads) relative to text prompt tokens. */
  cacheRatio?: Record<string, number>;
  /** Prompt tokens written to a cache relative to text prompt tokens. */
  cacheCreationRatio?: Record<string, number>;
  /** Audio input tokens relative to text prompt tokens. */
  audioRatio?: Record<string, number>;
  /** Audio output tokens relative to audio input tokens. */
  audioCompletionRatio?: Record<string, number>;
  /** Image input tokens relative to text prompt tokens. */
  imageRatio?: Record<string, number>;
  /** Long-context prices (option ModelPriceTiers): per model, tiers by prompt size. */
  priceTiers?: Record<string, unknown>;
  /** GroupGroupRatio: {userGroup: {usingGroup: ratio}}, in place of groupRatio for that user group. */
  groupGroupRatio?: Record<string, Record<string, number>>;
}

/**
 * One long-context price tier of a model (option ModelPriceTiers, this platform's name: new-api
 * prices long contexts with an expression, billing_setting.billing_expr, not with a table). A
 * request whose prompt has more than `above_prompt_tokens` tokens (cache reads and writes
 * included, as providers count it) is priced with the tier's ratios; a ratio the tier leaves
 * out stays the model's own. Cache and 1 h write ratios stay relative to the tier's model ratio.
 */
export interface PriceTier {
  above_prompt_tokens: number;
  model_ratio: number;
  completion_ratio?: number;
  cache_ratio?: number;
  create_cache_ratio?: number;
}

/** How a model is priced. Token-kind ratios are 1 (the text price) where none is set. */
export type Price =
  | {
      kind: 'ratio';
      modelRatio: number;
      completionRatio: number;
      cacheRatio: number;
      /** Cache writes for 5 minutes. */
      cacheCreationRatio: number;
      /** Cache writes for an hour: the 5-minute ratio x 1.6 (new-api's 6 / 3.75). */
      cacheCreation1hRatio: number;
      audioRatio: number;
      audioCompletionRatio: number;
      imageRatio: number;
      /** The model's long-context tiers, ascending (none: one price whatever the prompt). */
      tiers?: PriceTier[];
      /** The tier these ratios are of (set by priceAt; absent: the model's base price). */
      tier?: PriceTier;
    }
  | { kind: 'call'; price: number };

/** Exact, `*` pattern, undated name, then the entry it extends (services/common/src/model-lookup.ts). */
const lookup = lookupModel;

/** A one-hour cache write against a 5-minute one (Anthropic: 2x input against 1.25x; new-api's 6 / 3.75). */
export const CACHE_1H_MULTIPLIER = 6 / 3.75;

/**
 * The price of a model. A model with neither a price nor a ratio is served at `unpricedRatio`
 * when the admin allows unpriced models (options UnpricedModelsEnabled and DefaultModelRatio),
 * else refused with a 400 naming it: the client's request cannot be served as it is, and SDKs
 * neither retry a 400 nor read it as a failed authentication (as they did the 403 before).
 */
export function priceOf(r: Ratios, model: string, unpricedRatio?: number): Price {
  const price = lookup(r.modelPrice, model);
  if (price !== undefined && price >= 0) return { kind: 'call', price };
  const modelRatio = lookup(r.modelRatio, model) ?? unpricedRatio;
  if (modelRatio === undefined) {
    throw new RelayError(400, `模型 ${model} 倍率或价格未配置，请联系管理员设置`, 'model_price_missing');
  }
  // A ratio the maps do not set is 1: the text price.
  const of = (map: Record<string, number> | undefined) => (map && lookup(map, model)) ?? 1;
  const tiers = r.priceTiers ? priceTiers(lookup(r.priceTiers, model)) : undefined;
  return {
    kind: 'ratio',
    ...(tiers ? { tiers } : {}),
    modelRatio,
    completionRatio: of(r.completionRatio),
    cacheRatio: of(r.cacheRatio),
    cacheCreationRatio: of(r.cacheCreationRatio),
    cacheCreation1hRatio: of(r.cacheCreationRatio) * CACHE_1H_MULTIPLIER,
    audioRatio: of(r.audioRatio),
    audioCompletionRatio: of(r.audioCompletionRatio),
    imageRatio: of(r.imageRatio),
  };
}

const isRatio = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0;

/**
 * A model's tiers as the option holds them, checked (the users service refuses bad ones on save;
 * an entry that still does not fit is left out) and sorted by threshold; undefined when none.
 */
export function priceTiers(raw: unknown): PriceTier[] | undefined {
  if (!Array.isArray(raw)) return undefined;
  const tiers = raw.filter(
    (t): t is PriceTier =>
      !!t &&
      typeof t === 'object' &&
      Number.isInteger(t.above_prompt_tokens) &&
      t.above_prompt_tokens >= 0 &&
      isRatio(t.model_ratio) &&
      (t.completion_ratio === undefined || isRatio(t.completion_ratio)) &&
      (t.cache_ratio === undefined || isRatio(t.cache_ratio)) &&
      (t.create_cache_ratio === undefined || isRatio(t.create_cache_ratio)),
  );
  return tiers.length ? tiers.sort((a, b) => a.above_prompt_tokens - b.above_prompt_tokens) : undefined;
}

/** The tier a prompt of `promptTokens` falls in: the highest threshold it exceeds; undefined: the base price. */
export function tierFor(tiers: readonly PriceTier[] | undefined, promptTokens: number): PriceTier | undefined {
  let found: PriceTier | undefined;
  for (const t of tiers ?? []) if (promptTokens > t.above_prompt_tokens) found = t;
  return found;
}

/** A model's price for a prompt of `promptTokens` tokens: its tier's ratios where one applies. */
export function priceAt(p: Price, promptTokens: number): Price {
  if (p.kind !== 'ratio' || !p.tiers) return p;
  return withTier(p, tierFor(p.tiers, promptTokens));
}

function withTier(p: Price & { kind: 'ratio' }, tier: PriceTier | undefined): Price {
  const base = p.tier ? undefined : p;
  if (!tier || !base) return p;
  const cacheCreationRatio = tier.create_cache_ratio ?? base.cacheCreationRatio;
  return {
    ...base,
    modelRatio: tier.model_ratio,
    completionRatio: tier.completion_ratio ?? base.completionRatio,
    cacheRatio: tier.cache_ratio ?? base.cacheRatio,
    cacheCreationRatio,
    cacheCreation1hRatio: cacheCreationRatio * CACHE_1H_MULTIPLIER,
    tier,
  };
}

/**
 * The prices a prompt of `low` to `high` tokens may be charged at: the base price and every
 * tier whose range meets [low, high] (a reservation takes the dearest of them).
 */
export function pricesBetween(p: Price, low: number, high: number): Price[] {
  if (p.kind !== 'ratio' || !p.tiers || p.tier) return [p];
  const out: Price[] = [];
  const tiers = p.tiers;
  if (low <= (tiers[0]?.above_prompt_tokens ?? Number.POSITIVE_INFINITY)) out.push(p);
  tiers.forEach((t, i) => {
    const next = tiers[i + 1]?.above_prompt_tokens ?? Number.POSITIVE_INFINITY;
    if (high > t.above_prompt_tokens && low <= next) out.push(withTier(p, t));
  });
  return out.length ? out : [priceAt(p, high)];
}

/**
 * How much a prompt estimate may fall short of the upstream's own count (another tokenizer,
 * images, tools): a reservation prices the estimate up to this factor above it, so a prompt
 * estimated just below a long-context threshold reserves at the dearer tier.
 */
export const PROMPT_ESTIMATE_MARGIN = 1.25;

/** The long-context tier of a settled price on the log row (new-api's matched_tier and its ratios). */
export function tierDetails(other: Record<string, unknown>, p: Price): void {
  if (p.kind !== 'ratio' || !p.tier) return;
  const round = (n: number) => Math.round(n * 1e6) / 1e6;
  other.matched_tier = `>${p.tier.above_prompt_tokens}`;
  other.tier_above_prompt_tokens = p.tier.above_prompt_tokens;
  other.tier_model_ratio = round(p.modelRatio);
  other.tier_completion_ratio = round(p.completionRatio);
  other.tier_cache_ratio = round(p.cacheRatio);
  other.tier_create_cache_ratio = round(p.cacheCreationRatio);
}

/**
 * The amount to reserve before the upstream call: what the request can cost at most,
 * (max(prompt estimate, PreConsumedQuota) + output tokens x completion ratio) x model ratio x
 * group ratio, where output tokens are max_tokens or, without it, the model's output limit
 * (reference-behaviour step 5 leaves the completion ratio out, so a reservation covered only a
 * fraction of an answer's price); or the per-call price. With long-context tiers, the price is
 * the dearest of those a prompt of `tierRange[0]` to `tierRange[1]` tokens (default: exactly
 * `promptTokens`) may be charged at, counted for `promptTokens`.
 */
export function preConsumeAmount(
  p: Price,
  groupRatio: number,
  quotaPerUnit: number,
  promptTokens: number,
  preConsumed: number,
  outputTokens: number,
  units = 1,
  tierRange: readonly [number, number] = [promptTokens, promptTokens],
): number {
  if (p.kind === 'ratio' && p.tiers && !p.tier) {
    let most = 0;
    for (const q of pricesBetween(p, tierRange[0], Math.max(...tierRange)))
      most = Math.max(most, reserveAt(q, groupRatio, quotaPerUnit, promptTokens, preConsumed, outputTokens, units));
    return most;
  }
  return reserveAt(p, groupRatio, quotaPerUnit, promptTokens, preConsumed, outputTokens, units);
}

function reserveAt(
  p: Price,
  groupRatio: number,
  quotaPerUnit: number,
  promptTokens: number,
  preConsumed: number,
  outputTokens: number,
  units: number,
): number {
  if (p.kind === 'call') return Math.ceil(p.price * quotaPerUnit * groupRatio * units);
  // Per token, the dearest kind a settle may count it as (settleQuota).
  // (One-hour cache writes are left out: they need the client's `ttl: "1h"`, and counting every
  // prompt at 1.6 x the write price would reserve far too much for all other calls.)
  const perPrompt = Math.max(1, p.cacheRatio, p.cacheCreationRatio, p.audioRatio, p.imageRatio);
  const perOutput = Math.max(p.completionRatio, p.audioRatio * p.audioCompletionRatio);
  const tokens = Math.max(promptTokens, preConsumed) * perPrompt + outputTokens * perOutput;
  return Math.ceil(tokens * p.modelRatio * groupRatio);
}

/**
 * The quota of a finished request: (prompt + completion x completion ratio) x model ratio x
 * group ratio, at least 1 when the ratios are not zero; or price x QuotaPerUnit x group ratio.
 * Where the upstream reports them, cached, cache-written, audio and image prompt tokens count with
 * their own ratios instead of the text price, and audio output tokens with audio ratio x audio
 * completion ratio instead of the completion ratio. A model with long-context tiers is priced by
 * the tier the upstream-reported prompt falls in.
 */
export function settleQuota(price: Price, groupRatio: number, quotaPerUnit: number, usage: Usage, units = 1): number {
  const p = priceAt(price, usage.promptTokens);
  if (p.kind === 'call') return Math.round(p.price * quotaPerUnit * groupRatio * Math.max(1, units));
  const ratio = p.modelRatio * groupRatio;
  if (ratio === 0) return 0;
  const cached = usage.cachedTokens ?? 0;
  const written = usage.cacheCreationTokens ?? 0;
  const hour = Math.min(written, usage.cacheCreation1hTokens ?? 0);
  const audioIn = usage.audioInputTokens ?? 0;
  const audioOut = usage.audioOutputTokens ?? 0;
  const imageIn = usage.imageInputTokens ?? 0;
  const textIn = Math.max(0, usage.promptTokens - cached - written - audioIn - imageIn);
  const textOut = Math.max(0, usage.completionTokens - audioOut);
  const prompt =
    textIn +
    cached * p.cacheRatio +
    (written - hour) * p.cacheCreationRatio +
    hour * p.cacheCreation1hRatio +
    audioIn * p.audioRatio +
    imageIn * p.imageRatio;
  const completion = textOut * p.completionRatio + audioOut * p.audioRatio * p.audioCompletionRatio;
  return Math.max(1, Math.round((prompt + completion) * ratio));
}
