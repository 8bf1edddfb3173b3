import { type FailoverRules, failoverRulesFrom, OPTION_CATALOGUE } from '@aigw/common';

/**
 * An attempt that failed upstream: the status the upstream answered (0 for a connection
 * failure), its message, and what the pipeline needs to decide on a retry.
 */
export class UpstreamFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** 'refused': a param override's return_error (answered as is, never retried). */
    readonly kind: 'http' | 'connection' | 'first_token_timeout' | 'stream' | 'refused' = 'http',
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

const DEFAULT_TEXTS = {
  AutomaticDisableKeywords: OPTION_CATALOGUE.AutomaticDisableKeywords.default,
  AutomaticDisableStatusCodes: OPTION_CATALOGUE.AutomaticDisableStatusCodes.default,
  AutomaticRetryStatusCodes: OPTION_CATALOGUE.AutomaticRetryStatusCodes.default,
};
let rules: () => FailoverRules = failoverRulesFrom((k) => DEFAULT_TEXTS[k]);

/**
 * Reads the failover rules from the options from now on (AutomaticRetryStatusCodes,
 * AutomaticDisableStatusCodes, AutomaticDisableKeywords); until then the catalogue's defaults.
 */
export function useFailoverOptions(read: (key: keyof typeof DEFAULT_TEXTS) => string): void {
  rules = failoverRulesFrom(read);
}

/**
 * Whether another channel should be tried (reference-behaviour step 6): connection failures and
 * first-token timeouts always; an upstream status when AutomaticRetryStatusCodes holds it (by
 * default 429, 5xx except 504/524 and 4xx except 400/408); never 504, once bytes reached the
 * client, or for a request a param override refused.
 */
export function isRetryable(f: UpstreamFailure): boolean {
  if (f.committed || f.kind === 'refused') return false;
  if (f.kind === 'connection' || f.kind === 'first_token_timeout') return true;
  return rules().retries(f.status);
}

/**
 * Whether a failure means the channel's key is unusable (reference-behaviour step 8): a status in
 * AutomaticDisableStatusCodes (401 by default) or a message holding one of
 * AutomaticDisableKeywords. The channels service decides, with AutomaticDisableChannelEnabled and
 * auto_ban.
 */
export function shouldDisable(f: UpstreamFailure): boolean {
  if (f.kind === 'connection' || f.kind === 'first_token_timeout' || f.kind === 'refused') return false;
  return rules().disables(f.status, f.message);
}

/** Applies a channel's status_code_mapping ({"400":"500"}); 200 is never rewritten. */
export function mapStatus(status: number, mapping: Record<string, string> | undefined): number {
  if (!mapping || status === 200) return status;
  const to = Number(mapping[String(status)]);
  return Number.isInteger(to) && to >= 100 && to <= 599 ? to : status;
}
