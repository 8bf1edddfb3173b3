import { ok } from '@aigw/common';
import type { Router } from 'express';
import type { RouteDeps } from '../deps.ts';
import { snake } from './wire.ts';

/** GET /api/pricing (public) and POST /api/option/rest_model_ratio (root). */
export function pricingRoutes(api: Router, { clients, guard, options }: RouteDeps): void {
  const { pricing } = clients;

  api.get('/pricing', async (req, res) => {
    const r = await pricing.getPricing({});
    const usable = options.json<Record<string, string>>('UserUsableGroups');
    res.json({
      success: true,
      message: '',
      data: r.items.map(snake),
      group_ratio: r.groupRatio,
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
