import type { ServiceImpl } from '@aigw/common';
import { pageOf } from '@aigw/common';
import type { RedemptionsService as RedemptionsServiceDesc } from '@aigw/proto/billing/v1/billing';
import type { RedemptionsService } from '../../domain/redemptions-service.ts';

/** gRPC handlers of RedemptionsService. */
export function redemptionsHandlers(codes: RedemptionsService): ServiceImpl<typeof RedemptionsServiceDesc> {
  return {
    async listRedemptions(req) {
      const p = pageOf(req.page);
      const { items, total } = await codes.list('', p.skip, p.pageSize);
      return { items, page: { page: p.page, pageSize: p.pageSize, total } };
    },
    async searchRedemptions(req) {
      const p = pageOf(req.page);
      const { items, total } = await codes.list(req.keyword, p.skip, p.pageSize);
      return { items, page: { page: p.page, pageSize: p.pageSize, total } };
    },
    async getRedemption(req) {
      return { redemption: await codes.get(req.id) };
    },
    async createRedemptions(req) {
      return { keys: await codes.create(req.actor?.userId ?? 0, req) };
    },
    async updateRedemption(req) {
      return { redemption: await codes.update(req.id, req) };
    },
    async updateRedemptionStatus(req) {
      return { redemption: await codes.setStatus(req.id, req.status) };
    },
    async deleteRedemption(req) {
      await codes.remove(req.id);
      return {};
    },
    deleteInvalidRedemptions: async () => ({ count: await codes.removeInvalid() }),
    async redeem(req) {
      return { quota: await codes.redeem(req.userId, req.username, req.key) };
    },
  };
}
