/** A request the relay refuses itself (auth, quota, limits, routing): HTTP status and message. */
export class RelayError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code = 'relay_error',
    /** Seconds for a Retry-After header (rate limits); 0 for none. */
    readonly retryAfter = 0,
  ) {
    super(message);
    this.name = 'RelayError';
  }
}

/** What a client is told when its pre-consume did not succeed for a reason other than its balance. */
export const PRE_CONSUME_FAILED = '预扣费失败，请稍后重试';

/**
 * The refusal of a pre-consume billing did not answer: unreachable or out of time (UNAVAILABLE,
 * DEADLINE_EXCEEDED) is an outage the caller can retry, 503 with Retry-After; any other failure
 * (billing's own INTERNAL, a bad amount it refused) stays 500. Both with the same message.
 */
export function preConsumeFailed(err: unknown): RelayError {
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'UNAVAILABLE' || code === 'DEADLINE_EXCEEDED') {
    return new RelayError(503, PRE_CONSUME_FAILED, 'pre_consume_failed', 1);
  }
  return new RelayError(500, PRE_CONSUME_FAILED, 'pre_consume_failed');
}
