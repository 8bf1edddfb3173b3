/**
 * Quota arithmetic of reference-behaviour steps 5 and 9. Models are priced either by ratio
 * (1 = $0.002 per 1K tokens) or per call (dollars); the group ratio multiplies both.
 */
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
    }
  | { kind: 'call'; price: number };

/**
 * Looks a model up exactly, then by a `*` pattern (new-api's `gemini-2.5-flash-thinking-*`, the
 * longest that fits), then without a date or version suffix (gpt-4o-2024-08-06 -> gpt-4o), then by
 * the longest entry it extends (claude-sonnet-4-5-thinking -> claude-sonnet-4-5).
 */
function lookup(map: Record<string, number>, model: string): number | undefined {
  if (Object.hasOwn(map, model)) return map[model];
  let pattern: string | undefined;
  for (const k of Object.keys(map))
    if (k.endsWith('*') && model.startsWith(k.slice(0, -1)) && (!pattern || k.length > pattern.length)) pattern = k;
  if (pattern) return map[pattern];
  const base = model.replace(/-(\d{4}-\d{2}-\d{2}|\d{8}|\d{4}|latest|preview)$/i, '');
  if (base !== model && Object.hasOwn(map, base)) return map[base];
  let best: string | undefined;
  for (const k of Object.keys(map)) if (model.startsWith(`${k}-`) && (!best || k.length > best.length)) best = k;
  return best ? map[best] : undefined;
}

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
  return {
    kind: 'ratio',
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

/**
 * The amount to reserve before the upstream call: what the request can cost at most,
 * (max(prompt estimate, PreConsumedQuota) + output tokens x completion ratio) x model ratio x
 * group ratio, where output tokens are max_tokens or, without it, the model's output limit
 * (reference-behaviour step 5 leaves the completion ratio out, so a reservation covered only a
 * fraction of an answer's price); or the per-call price.
 */
export function preConsumeAmount(
  p: Price,
  groupRatio: number,
  quotaPerUnit: number,
  promptTokens: number,
  preConsumed: number,
  outputTokens: number,
  units = 1,
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
 * completion ratio instead of the completion ratio.
 */
export function settleQuota(p: Price, groupRatio: number, quotaPerUnit: number, usage: Usage, units = 1): number {
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
