/**
 * The failover rules as options (new-api's names and formats): AutomaticDisableStatusCodes and
 * AutomaticRetryStatusCodes are comma-separated codes and ranges ("401,403,500-599"; a full-width
 * comma is read as a comma), AutomaticDisableKeywords one keyword per line, matched
 * case-insensitively in the upstream's error message. Read by the relay (retry, should_disable)
 * and the channels service (channel tests); checked on save by the users service.
 */

export interface StatusRange {
  start: number;
  end: number;
}

/** Parses "401,403,500-599" into sorted, merged ranges; throws naming the invalid parts. */
export function parseStatusCodeRanges(text: string): StatusRange[] {
  const bad: string[] = [];
  const ranges: StatusRange[] = [];
  for (const raw of text.replaceAll('，', ',').split(',')) {
    const token = raw.replaceAll(' ', '').trim();
    if (token === '') continue;
    const m = /^(\d{3})(?:-(\d{3}))?$/.exec(token);
    const start = Number(m?.[1]);
    const end = m?.[2] === undefined ? start : Number(m[2]);
    if (!m || start < 100 || end > 599 || start > end) bad.push(raw.trim());
    else ranges.push({ start, end });
  }
  if (bad.length > 0) throw new Error(`无效的状态码规则：${bad.join(', ')}`);
  ranges.sort((a, b) => a.start - b.start || a.end - b.end);
  const merged: StatusRange[] = [];
  for (const r of ranges) {
    const last = merged.at(-1);
    if (last && r.start <= last.end + 1) last.end = Math.max(last.end, r.end);
    else merged.push({ ...r });
  }
  return merged;
}

export const inRanges = (ranges: readonly StatusRange[], code: number) =>
  ranges.some((r) => code >= r.start && code <= r.end);

/** One keyword per line, trimmed and lower-cased; blank lines dropped. */
export const parseKeywords = (text: string): string[] =>
  text
    .split('\n')
    .map((k) => k.trim().toLowerCase())
    .filter(Boolean);

export interface FailoverRules {
  /** Whether an upstream answer with this status may go to another channel (504 never). */
  retries(status: number): boolean;
  /** Whether a failure means the channel (or key) is unusable: its status or a keyword. */
  disables(status: number, message: string): boolean;
}

/** The three options' texts as stored (the catalogue gives their defaults). */
export interface FailoverOptionTexts {
  AutomaticDisableKeywords: string;
  AutomaticDisableStatusCodes: string;
  AutomaticRetryStatusCodes: string;
}

/** Rules from the options; a stored value that does not parse counts as empty (saves are checked). */
export function failoverRules(o: FailoverOptionTexts): FailoverRules {
  const ranges = (t: string) => {
    try {
      return parseStatusCodeRanges(t);
    } catch {
      return [];
    }
  };
  const disableCodes = ranges(o.AutomaticDisableStatusCodes);
  const retryCodes = ranges(o.AutomaticRetryStatusCodes);
  const keywords = parseKeywords(o.AutomaticDisableKeywords);
  return {
    retries: (status) => status !== 504 && inRanges(retryCodes, status),
    disables(status, message) {
      if (inRanges(disableCodes, status)) return true;
      if (keywords.length === 0) return false;
      const m = message.toLowerCase();
      return keywords.some((k) => m.includes(k));
    },
  };
}

/** Option keys whose change rebuilds the rules. */
export const FAILOVER_OPTION_KEYS = new Set([
  'AutomaticDisableKeywords',
  'AutomaticDisableStatusCodes',
  'AutomaticRetryStatusCodes',
]);

/** Rules read from an options reader, rebuilt only when one of the texts changed. */
export function failoverRulesFrom(read: (key: keyof FailoverOptionTexts) => string): () => FailoverRules {
  let key = '';
  let rules: FailoverRules | undefined;
  return () => {
    const texts = {
      AutomaticDisableKeywords: read('AutomaticDisableKeywords'),
      AutomaticDisableStatusCodes: read('AutomaticDisableStatusCodes'),
      AutomaticRetryStatusCodes: read('AutomaticRetryStatusCodes'),
    };
    const k = JSON.stringify(texts);
    if (!rules || k !== key) {
      rules = failoverRules(texts);
      key = k;
    }
    return rules;
  };
}
