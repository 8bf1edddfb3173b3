import type { ServiceClient } from '@aigw/common';
import type { CreditReason, WalletService } from '@aigw/proto/billing/v1/billing';
import type { Wallet } from '../domain/ports.ts';

/** The users service's view of billing's WalletService: credits, idempotent by request id. */
export function billingWallet(client: ServiceClient<typeof WalletService>): Wallet {
  return {
    async credit(user, credit) {
      const res = await client.credit({
        requestId: credit.request_id,
        userId: user.id,
        username: user.username,
        amount: credit.amount,
        reason: credit.reason as CreditReason,
        content: credit.content,
      });
      return res.wallet?.quota ?? 0;
    },
  };
}
