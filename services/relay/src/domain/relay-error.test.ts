import { AppError } from '@aigw/common';
import { describe, expect, it } from 'vitest';
import { PRE_CONSUME_FAILED, preConsumeFailed } from './relay-error.ts';

describe('pre-consume failures', () => {
  it('when billing cannot be reached or runs out of time, then the client is told 503 (retry); any other failure stays 500', () => {
    for (const code of ['UNAVAILABLE', 'DEADLINE_EXCEEDED'] as const) {
      expect(preConsumeFailed(new AppError(code, 'x'))).toMatchObject({
        status: 503,
        message: PRE_CONSUME_FAILED,
        code: 'pre_consume_failed',
        retryAfter: 1,
      });
    }
    for (const err of [new AppError('INTERNAL', 'x'), new AppError('INVALID_ARGUMENT', 'x'), new Error('x'), null]) {
      expect(preConsumeFailed(err)).toMatchObject({ status: 500, message: '预扣费失败，请稍后重试', retryAfter: 0 });
    }
  });
});
