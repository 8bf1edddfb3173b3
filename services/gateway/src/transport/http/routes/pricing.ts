import { ok } from '@aigw/common';
import type { Router } from 'express';
import { pricingGroupRatios, selectableGroups } from '../../../domain/user-groups.ts';
import type { RouteDeps } from '../deps.ts';
import { snake } from './wire.ts';

/**
 * GET /api/pricing (public) and POST /api/option/rest_model_ratio (root). The served models without
 * a price are GET /api/models/missing's `unpriced` (model-meta.ts).
 */
export function pricingRoutes(api: Router, { clients, guard, options }: RouteDeps): void {
  const { pricing } = clients;

  api.get('/pricing', async (req, res) => {
    // The token-kind maps come with the relay's ratios (explicit entries and the family rules).
    const [r, ratios] = await Promise.all([pricing.getPricing({}), pricing.getRatios({})]);
    // A signed-in user sees the groups they may pick and what they pay in each (GroupGroupRatio);
    // visitors every group at GroupRatio.
    const viewer = req.sessionUser;
    const usable = viewer
      ? selectableGroups(viewer, options)
      : options.json<Record<string, string>>('UserUsableGroups');
    const tiers = options.json<Record<string, unknown>>('ModelPriceTiers');
    res.json({
      success: true,
      message: '',
      data: r.items.map((item) => {
        const row = snake(item);
        if (item.quotaType === 1) return row;
        // new-api's cache_ratio and create_cache_ratio where set (an hour's write costs 1.6 x the
        // latter), and this platform's long-context tiers (option ModelPriceTiers).
        const name = item.modelName;
        if (Object.hasOwn(ratios.cacheRatio, name)) row.cache_ratio = ratios.cacheRatio[name];
        if (Object.hasOwn(ratios.cacheCreationRatio, name)) row.create_cache_ratio = ratios.cacheCreationRatio[name];
        if (tiers && Array.isArray(tiers[name])) row.price_tiers = tiers[name];
        return row;
      }),
      group_ratio: viewer ? pricingGroupRatios(viewer, options) : r.groupRatio,
      usable_group: usable,
      // Logged-out visitors see the default group's prices.
      user_group: req.sessionUser?.group ?? 'default',
    });
  });

  api.post('/option/rest_model_ratio', guard.root, async (_req, res) => {
    await pricing.resetModelRatios({});
    ok(res, undefined, '模型倍率已重置');
  });
}
