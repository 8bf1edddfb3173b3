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

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AppError';
    this.code = code;
  }

  /** Rebuilds an AppError from a gRPC status code and details (client side of a call). */
  static fromGrpc(status: number, details: string, cause?: unknown): AppError {
    return new AppError(codeByGrpcStatus.get(status) ?? 'INTERNAL', details, { cause });
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
