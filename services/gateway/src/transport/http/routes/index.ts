import type { Router } from 'express';
import type { RouteDeps } from '../deps.ts';
import { channelRoutes } from './channel.ts';
import { modelsRoutes } from './models.ts';
import { pricingRoutes } from './pricing.ts';
import { redemptionRoutes } from './redemption.ts';
import { statusRoutes } from './status.ts';
import { tokenRoutes } from './token.ts';
import { topupRoutes } from './topup.ts';

/** Mounts every /api route module. One line per module. */
export function mountRoutes(api: Router, deps: RouteDeps): void {
  statusRoutes(api, deps);
  modelsRoutes(api, deps);
  channelRoutes(api, deps);
  tokenRoutes(api, deps);
  redemptionRoutes(api, deps);
  topupRoutes(api, deps);
  pricingRoutes(api, deps);
}
