/**
 * The one error type of the platform. Domain code throws it; transports map it once:
 * gRPC status (see `grpcStatusOf`) and the spec's HTTP envelope (see `httpStatusOf`).
 * The cause is logged, never sent to a client.
 */
export type ErrorCode =
  | 'INVALID_ARGUMENT'
  | 'UNAUTHENTICATED'
  | 'PERMISSION_DENIED'
  | 'NOT_FOUND'
  | 'ALREADY_EXISTS'
  | 'FAILED_PRECONDITION'
  | 'RESOURCE_EXHAUSTED'
  | 'UNAVAILABLE'
  | 'DEADLINE_EXCEEDED'
  | 'INTERNAL';

/** gRPC numeric status for each code (values from the gRPC spec). */
export const grpcStatusOf: Record<ErrorCode, number> = {
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
};

/** Trailing gRPC metadata key our servers set on a status made from an AppError (client-safe details). */
export const APP_ERROR_KEY = 'aigw-app-error';

/** Trailing gRPC metadata key carrying an AppError's `retryAfterMs` (the refusal may clear within it). */
export const RETRY_AFTER_KEY = 'aigw-retry-after-ms';

/**
 * What a user is told for a failure made by the gRPC library rather than by a service (a deadline,
 * a lost connection, a cancelled call): the library's own text names addresses and internals. Codes
 * left out keep the library's details (they never come from the transport itself).
 */
const TRANSPORT_MESSAGES: Partial<Record<ErrorCode, string>> = {
  DEADLINE_EXCEEDED: '服务响应超时，请稍后重试',
  UNAVAILABLE: '服务暂不可用，请稍后重试',
  INTERNAL: '服务器内部错误',
};

/** HTTP status used by the gateway for each code. Business failures keep 200 with success=false. */
export const httpStatusOf: Record<ErrorCode, number> = {
  INVALID_ARGUMENT: 200,
  NOT_FOUND: 200,
  ALREADY_EXISTS: 200,
  FAILED_PRECONDITION: 200,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  RESOURCE_EXHAUSTED: 429,
  UNAVAILABLE: 503,
  DEADLINE_EXCEEDED: 504,
  INTERNAL: 500,
};

const codeByGrpcStatus = new Map<number, ErrorCode>(
  Object.entries(grpcStatusOf).map(([code, status]) => [status, code as ErrorCode]),
);

/** An error with a code and a client-safe message; `cause` stays server-side. */
export class AppError extends Error {
  readonly code: ErrorCode;
  /**
   * A refusal that may clear by itself within this time (ms): the server already asked for what
   * would let it pass (billing: a user's balance held by wallet slices that relays are asked to give
   * back), so one retry after at most this long may succeed. Absent: retrying changes nothing.
   */
  readonly retryAfterMs: number | undefined;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; retryAfterMs?: number | undefined }) {
    super(message, options && 'cause' in options ? { cause: options.cause } : undefined);
    this.name = 'AppError';
    this.code = code;
    this.retryAfterMs = options?.retryAfterMs;
  }

  /**
   * Rebuilds an AppError from a gRPC status code and details (client side of a call). fromServer:
   * the status was sent by one of our servers for an AppError (trailing metadata APP_ERROR_KEY), so
   * its details are a client-safe message; otherwise the gRPC library made it (a deadline, a lost
   * connection: "Deadline exceeded after 5.002s,... remote_addr=...") and a user is shown a
   * generic message instead, the details staying in the cause for the logs.
   */
  static fromGrpc(status: number, details: string, cause?: unknown, fromServer = true): AppError {
    const code = codeByGrpcStatus.get(status) ?? 'INTERNAL';
    if (fromServer) return new AppError(code, details, { cause });
    const safe = TRANSPORT_MESSAGES[code] ?? details;
    return new AppError(code, safe, { cause: cause ?? new Error(details) });
  }
}

/** Shorthands for the common cases. */
export const invalid = (message: string) => new AppError('INVALID_ARGUMENT', message);
export const notFound = (message: string) => new AppError('NOT_FOUND', message);
export const denied = (message: string) => new AppError('PERMISSION_DENIED', message);
export const unauthenticated = (message: string) => new AppError('UNAUTHENTICATED', message);
export const conflict = (message: string) => new AppError('ALREADY_EXISTS', message);
export const precondition = (message: string) => new AppError('FAILED_PRECONDITION', message);

/** Normalises anything thrown into an AppError; unknown errors become INTERNAL with a generic message. */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  return new AppError('INTERNAL', '服务器内部错误', { cause: err });
}
