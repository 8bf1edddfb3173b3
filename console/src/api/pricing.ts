import { request } from './request.ts';

/** One row of GET /api/pricing (spec 02 section 3). */
export interface PricingEntry {
  model_name: string;
  /** 0 per usage (ratios), 1 per call (model_price). */
  quota_type: number;
  model_ratio: number;
  model_price: number;
  completion_ratio: number;
  enable_groups: string[];
  /** Audio input tokens cost this many times text input (when the server sends it). */
  audio_ratio?: number;
  /** Audio output tokens cost this many times audio input (when the server sends it). */
  audio_completion_ratio?: number;
  /** Cache reads and (5-minute) cache writes against text input, where set (new-api's names). */
  cache_ratio?: number;
  create_cache_ratio?: number;
  /** Long-context tiers (option ModelPriceTiers): above a prompt size, other ratios. */
  price_tiers?: PriceTier[];
}

export interface PriceTier {
  above_prompt_tokens: number;
  model_ratio: number;
  completion_ratio?: number;
  cache_ratio?: number;
  create_cache_ratio?: number;
}

/** GET /api/pricing: data plus group_ratio (and the caller's group) at the top level. */
export const getPricing = () =>
  request<PricingEntry[]>('GET', '/api/pricing') as Promise<{
    success: boolean;
    message: string;
    data?: PricingEntry[];
    group_ratio?: Record<string, number>;
    usable_group?: Record<string, string>;
    user_group?: string;
  }>;

/**
 * The models channels serve with neither a price nor a ratio: `unpriced` of GET /api/models/missing
 * (admin; its `data`, as in new-api, lists the served models without catalogue metadata).
 */
export const getUnpricedModels = async () => {
  const res = await request<string[]>('GET', '/api/models/missing', { toast: false });
  return { ...res, data: (res as { unpriced?: string[] }).unpriced ?? [] };
};
