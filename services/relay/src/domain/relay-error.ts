/** A request the relay refuses itself (auth, quota, limits, routing): HTTP status and message. */
export class RelayError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code = 'relay_error',
  ) {
    super(message);
    this.name = 'RelayError';
  }
}
