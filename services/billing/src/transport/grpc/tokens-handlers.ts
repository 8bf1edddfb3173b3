import type { ServiceImpl } from '@aigw/common';
import { pageOf } from '@aigw/common';
import type { TokensService as TokensServiceDesc } from '@aigw/proto/billing/v1/billing';
import type { TokensService } from '../../domain/tokens-service.ts';

/** gRPC handlers of TokensService. */
export function tokensHandlers(tokens: TokensService): ServiceImpl<typeof TokensServiceDesc> {
  return {
    async listTokens(req) {
      const p = pageOf(req.page);
      const { items, total } = await tokens.list(req.userId, p.skip, p.pageSize);
      return { items, page: { page: p.page, pageSize: p.pageSize, total } };
    },
    async searchTokens(req) {
      const p = pageOf(req.page);
      const { items, total } = await tokens.search(req.userId, req.keyword, req.token, p.skip, p.pageSize);
      return { items, page: { page: p.page, pageSize: p.pageSize, total } };
    },
    async getToken(req) {
      return { token: await tokens.get(req.userId, req.id) };
    },
    async createTokens(req) {
      return { tokens: await tokens.create(req.userId, req) };
    },
    async updateToken(req) {
      return { token: await tokens.update(req.userId, req.id, req) };
    },
    async updateTokenStatus(req) {
      return { token: await tokens.setStatus(req.userId, req.id, req.status) };
    },
    async deleteToken(req) {
      await tokens.remove(req.userId, req.id);
      return {};
    },
    async lookupToken(req) {
      return { token: await tokens.lookup(req.key) };
    },
    async listUserTokens(req) {
      return { tokens: await tokens.listForUser(req.userId, req.onlyEnabled, req.limit) };
    },
  };
}
