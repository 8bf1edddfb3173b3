import type { ServiceImpl } from '@aigw/common';
import type {
  PricingService as PricingServiceDesc,
  TopupService as TopupServiceDesc,
} from '@aigw/proto/billing/v1/billing';
import type { OptionReader } from '../../domain/ports.ts';
import type { PricingService } from '../../domain/pricing-service.ts';
import type { TopupService } from '../../domain/topup-service.ts';

/** gRPC handlers of TopupService. */
export function topupHandlers(topup: TopupService): ServiceImpl<typeof TopupServiceDesc> {
  return {
    async quoteTopup(req) {
      return { payable: topup.quote(req.amount, req.group, req.paymentMethod) };
    },
    async createTopupOrder(req) {
      return topup.createOrder(req);
    },
    async handlePaymentNotify(req) {
      return topup.handleNotify(req.params);
    },
    async getTopupInfo() {
      return topup.info();
    },
    async createStripeOrder(req) {
      return topup.createStripeOrder(req);
    },
    async createCreemOrder(req) {
      return topup.createCreemOrder(req);
    },
    async handleCardWebhook(req) {
      return topup.handleCardWebhook(req.provider, Buffer.from(req.payload), req.signature);
    },
    async listTopups(req) {
      return topup.list(req);
    },
    async completeTopup(req) {
      return topup.complete(req.tradeNo);
    },
  };
}

/** gRPC handlers of PricingService. */
export function pricingHandlers(
  pricing: PricingService,
  options: OptionReader,
): ServiceImpl<typeof PricingServiceDesc> {
  return {
    async getPricing() {
      return pricing.pricing();
    },
    async getGroupRatios() {
      return { groupRatio: pricing.groupRatios() };
    },
    async getRatios() {
      return { ...pricing.ratios(), version: options.version };
    },
    async resetModelRatios() {
      await pricing.reset();
      return {};
    },
  };
}
