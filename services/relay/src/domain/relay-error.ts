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
