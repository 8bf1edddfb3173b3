import { createHash } from 'node:crypto';

/**
 * A short stable name for one upstream key of a multi-key channel (the first 16 hex digits of its
 * SHA-256): the relay reports a failing key by it and the channels service finds the key's line
 * by it, so no key text travels in events or shows in lists.
 */
export function keyFingerprint(key: string): string {
  return createHash('sha256').update(key.trim()).digest('hex').slice(0, 16);
}

/** The keys of a multi-key channel: one per non-empty line, trimmed. */
export function splitKeys(text: string): string[] {
  return text
    .split('\n')
    .map((k) => k.trim())
    .filter(Boolean);
}
