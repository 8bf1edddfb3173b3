import type { ServiceImpl } from '@aigw/common';
import { invalid } from '@aigw/common/errors';
import { AdjustMode, type WalletService as WalletServiceDesc } from '@aigw/proto/billing/v1/billing';
import type { WalletService } from '../../domain/wallet-service.ts';

/** gRPC handlers of WalletService: thin, they only translate to the use cases. */
export function walletHandlers(wallet: WalletService): ServiceImpl<typeof WalletServiceDesc> {
  return {
    async getWallet(req) {
      return { wallet: await wallet.get(req.userId) };
    },
    async getWallets(req) {
      return { wallets: await wallet.getMany(req.userIds) };
    },
    async preConsume(req, ctx) {
      // A pre-consume whose caller gave up (deadline) is not applied if it is still queued.
      return wallet.preConsume(req, { signal: ctx.signal });
    },
    async settle(req) {
      return wallet.settle(req);
    },
    async refund(req) {
      return wallet.refund(req);
    },
    async adjustQuota(req) {
      if (req.mode !== AdjustMode.ADD && req.mode !== AdjustMode.SET) throw invalid('无效的额度调整方式');
      const w = await wallet.adjustQuota({
        requestId: req.requestId,
        userId: req.userId,
        username: req.username,
        mode: req.mode === AdjustMode.ADD ? 'add' : 'set',
        amount: req.amount,
        remark: req.remark,
        actor: { userId: req.actor?.userId ?? 0, username: req.actor?.username ?? '' },
      });
      return { wallet: w };
    },
    async credit(req) {
      const { wallet: w } = await wallet.credit(req);
      return { wallet: w };
    },
  };
}
