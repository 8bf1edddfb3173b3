import type { ServiceImpl } from '@aigw/common';
import { invalid } from '@aigw/common/errors';
import type { PasskeysService } from '@aigw/proto/users/v1/passkeys';
import type { Passkeys } from '../../domain/passkeys.ts';
import { toUserMessage } from './users-handlers.ts';

/** gRPC adapter of the passkey use cases (PasskeysService in proto/users/v1/passkeys.proto). */
export function passkeysHandlers(uc: Passkeys): ServiceImpl<typeof PasskeysService> {
  return {
    beginPasskeyRegistration: (req) => uc.beginRegistration(req.userId),
    async finishPasskeyRegistration(req) {
      await uc.finishRegistration(req.userId, req.credentialJson, req.expectedChallenge);
      return {};
    },
    beginPasskeyAssertion: (req) => uc.beginAssertion(req.userId),
    finishPasskeyAssertion: async (req) => ({
      user: toUserMessage(await uc.finishAssertion(req.userId, req.credentialJson, req.expectedChallenge)),
    }),
    getPasskeyStatus: (req) => uc.status(req.userId),
    async deletePasskey(req) {
      await uc.remove(req.userId);
      return {};
    },
    async adminResetPasskey(req) {
      if (!req.actor?.userId) throw invalid('缺少操作者');
      await uc.adminReset({ userId: req.actor.userId, role: req.actor.role }, req.id);
      return {};
    },
  };
}
