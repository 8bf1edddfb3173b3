/**
 * An attempt that failed upstream: the status the upstream answered (0 for a connection
 * failure), its message, and what the pipeline needs to decide on a retry.
 */
export class UpstreamFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly kind: 'http' | 'connection' | 'first_token_timeout' | 'stream' = 'http',
    /** True once bytes reached the client: nothing can be retried any more. */
    readonly committed = false,
  ) {
    super(message);
    this.name = 'UpstreamFailure';
  }
}

/** The message of a provider's error body, whatever its shape. */
export function upstreamMessage(raw: string, status: number): string {
  try {
    const o = JSON.parse(raw) as Record<string, unknown>;
    const err = o.error;
    if (typeof err === 'string') return err;
    if (err && typeof err === 'object' && typeof (err as { message?: unknown }).message === 'string') {
      return (err as { message: string }).message;
    }
    if (typeof o.message === 'string') return o.message;
    if (typeof o.detail === 'string') return o.detail;
    if (Array.isArray(o) && o[0]?.error?.message) return String(o[0].error.message);
  } catch {
    // not JSON
  }
  const text = raw.trim().slice(0, 300);
  return text || `upstream answered HTTP ${status}`;
}

/**
 * Whether another channel should be tried (reference-behaviour step 6): 429, 5xx except
 * 504/524, connection failures and first-token timeouts; never 400, 408 or a 2xx. Other 4xx
 * (401, 403, 404: a broken channel) are retried.
 */
export function isRetryable(f: UpstreamFailure): boolean {
  if (f.committed) return false;
  if (f.kind === 'connection' || f.kind === 'first_token_timeout') return true;
  const s = f.status;
  if (s === 429) return true;
  if (s >= 500) return s !== 504 && s !== 524;
  if (s === 400 || s === 408) return false;
  if (s >= 200 && s < 300) return false;
  return true;
}

const DISABLE_PATTERNS = [
  /incorrect api key/i,
  /invalid api key/i,
  /api key not valid/i,
  /invalid_api_key/i,
  /api key expired/i,
  /authentication/i,
  /unauthorized/i,
  /account.*(deactivated|disabled|suspended)/i,
  /organization.*(deactivated|disabled)/i,
  /(quota|credit|balance).*(exceeded|exhausted|insufficient|too low)/i,
  /insufficient.?(quota|balance|credit)/i,
  /billing/i,
  /permission denied/i,
  /permission_denied/i,
  /does not have access/i,
  // AWS (Bedrock): an unknown access key, a wrong secret.
  /security token included in the request is invalid/i,
  /signature we calculated does not match/i,
];

/**
 * Whether a failure means the channel's key is unusable (reference-behaviour step 8): 401, or a
 * message about an invalid key, a deactivated account, exhausted quota or credit, or denied
 * permission. The channels service decides, with AutomaticDisableChannelEnabled and auto_ban.
 */
export function shouldDisable(f: UpstreamFailure): boolean {
  if (f.kind === 'connection' || f.kind === 'first_token_timeout') return false;
  if (f.status === 401) return true;
  if (f.status === 400 || f.status === 403 || f.status === 402 || f.status === 429 || f.status === 404) {
    return DISABLE_PATTERNS.some((p) => p.test(f.message));
  }
  return false;
}

/** Applies a channel's status_code_mapping ({"400":"500"}); 200 is never rewritten. */
export function mapStatus(status: number, mapping: Record<string, string> | undefined): number {
  if (!mapping || status === 200) return status;
  const to = Number(mapping[String(status)]);
  return Number.isInteger(to) && to >= 100 && to <= 599 ? to : status;
}
