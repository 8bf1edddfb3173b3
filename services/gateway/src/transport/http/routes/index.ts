import type { Router } from 'express';
import type { RouteDeps } from '../deps.ts';
import { accountRoutes } from './account.ts';
import { auditTrailRoutes } from './audit-trail.ts';
import { cardPaymentRoutes } from './card-payments.ts';
import { channelRoutes } from './channel.ts';
import { checkinRoutes } from './checkin.ts';
import { consolePanelRoutes } from './console-panels.ts';
import { dataRoutes } from './data.ts';
import { logRoutes } from './log.ts';
import { logByKeyRoutes } from './log-by-key.ts';
import { logExportRoutes } from './log-export.ts';
import { loginSessionRoutes } from './login-sessions.ts';
import { modelsRoutes } from './models.ts';
import { oauthRoutes } from './oauth.ts';
import { optionRoutes } from './option.ts';
import { passkeyRoutes } from './passkey.ts';
import { pricingRoutes } from './pricing.ts';
import { redemptionRoutes } from './redemption.ts';
import { secureVerificationRoutes } from './secure-verification.ts';
import { ssoRoutes } from './sso.ts';
import { statusRoutes } from './status.ts';
import { subscriptionRoutes } from './subscription.ts';
import { taskRoutes } from './task.ts';
import { tokenRoutes } from './token.ts';
import { topupRoutes } from './topup.ts';
import { twoFactorRoutes } from './two-factor.ts';
import { userRoutes } from './user.ts';
import { userSettingRoutes } from './user-setting.ts';

/** Routes that read their body raw (webhook signatures): mounted before the JSON parser. */
export { cardWebhookRoutes as mountRawRoutes } from './card-payments.ts';

/** Mounts every /api route module. One line per module. */
export function mountRoutes(api: Router, deps: RouteDeps): void {
  auditTrailRoutes(api, deps); // first: sees every admin action (and an option's old value)
  statusRoutes(api, deps);
  accountRoutes(api, deps);
  twoFactorRoutes(api, deps);
  loginSessionRoutes(api, deps);
  checkinRoutes(api, deps);
  passkeyRoutes(api, deps);
  secureVerificationRoutes(api, deps);
  userSettingRoutes(api, deps); // before userRoutes: /user/setting is not a user id
  userRoutes(api, deps);
  oauthRoutes(api, deps);
  ssoRoutes(api, deps); // after oauthRoutes: GET /oauth/:provider takes what the fixed /oauth/* routes leave
  consolePanelRoutes(api, deps); // before optionRoutes: checks panel lists on PUT /option/
  optionRoutes(api, deps);
  modelsRoutes(api, deps);
  channelRoutes(api, deps);
  tokenRoutes(api, deps);
  redemptionRoutes(api, deps);
  topupRoutes(api, deps);
  cardPaymentRoutes(api, deps);
  subscriptionRoutes(api, deps);
  pricingRoutes(api, deps);
  logRoutes(api, deps);
  logExportRoutes(api, deps);
  logByKeyRoutes(api, deps);
  dataRoutes(api, deps);
  taskRoutes(api, deps);
}
