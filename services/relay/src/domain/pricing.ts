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
}

export type Price = { kind: 'ratio'; modelRatio: number; completionRatio: number } | { kind: 'call'; price: number };

/** Looks a model up exactly, then without a date or version suffix (gpt-4o-2024-08-06 -> gpt-4o). */
function lookup(map: Record<string, number>, model: string): number | undefined {
  if (Object.hasOwn(map, model)) return map[model];
  const base = model.replace(/-(\d{4}-\d{2}-\d{2}|\d{8}|\d{4}|latest|preview)$/i, '');
  if (base !== model && Object.hasOwn(map, base)) return map[base];
  let best: string | undefined;
  for (const k of Object.keys(map)) if (model.startsWith(`${k}-`) && (!best || k.length > best.length)) best = k;
  return best ? map[best] : undefined;
}

/** The price of a model; RelayError when it has none (unpriced models are refused). */
export function priceOf(r: Ratios, model: string): Price {
  const price = lookup(r.modelPrice, model);
  if (price !== undefined && price >= 0) return { kind: 'call', price };
  const modelRatio = lookup(r.modelRatio, model);
  if (modelRatio === undefined) {
    throw new RelayError(403, `模型 ${model} 倍率或价格未配置，请联系管理员设置`, 'model_price_missing');
  }
  return { kind: 'ratio', modelRatio, completionRatio: lookup(r.completionRatio, model) ?? 1 };
}

/**
 * The amount to reserve before the upstream call: (max(prompt estimate, PreConsumedQuota) +
 * max_tokens) x ratios, or the per-call price.
 */
export function preConsumeAmount(
  p: Price,
  groupRatio: number,
  quotaPerUnit: number,
  promptTokens: number,
  preConsumed: number,
  maxTokens: number,
  units = 1,
): number {
  if (p.kind === 'call') return Math.ceil(p.price * quotaPerUnit * groupRatio * units);
  return Math.ceil((Math.max(promptTokens, preConsumed) + maxTokens) * p.modelRatio * groupRatio);
}

/**
 * The quota of a finished request: (prompt + completion x completion ratio) x model ratio x
 * group ratio, at least 1 when the ratios are not zero; or price x QuotaPerUnit x group ratio.
 */
export function settleQuota(p: Price, groupRatio: number, quotaPerUnit: number, usage: Usage, units = 1): number {
  if (p.kind === 'call') return Math.round(p.price * quotaPerUnit * groupRatio * Math.max(1, units));
  const ratio = p.modelRatio * groupRatio;
  if (ratio === 0) return 0;
  const q = Math.round((usage.promptTokens + usage.completionTokens * p.completionRatio) * ratio);
  return Math.max(1, q);
}
