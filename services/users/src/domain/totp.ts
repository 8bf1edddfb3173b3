import { createHmac, randomBytes, randomInt } from 'node:crypto';

/**
 * RFC 6238 time-based one-time passwords (HOTP of RFC 4226 over 30-second steps), SHA-1 and six
 * digits as authenticator apps expect, and the backup codes that stand in for a lost device
 * (new-api's format: 8 characters, shown as XXXX-XXXX).
 */
export const TOTP_PERIOD_SECONDS = 30;
export const TOTP_DIGITS = 6;

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32 without padding. */
export function base32Encode(bytes: Buffer): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

/** Decodes base32 (case and padding ignored); throws on other characters. */
export function base32Decode(text: string): Buffer {
  const clean = text.toUpperCase().replace(/=+$/, '').replace(/\s/g, '');
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const ch of clean) {
    const idx = BASE32.indexOf(ch);
    if (idx < 0) throw new Error('not base32');
    value = (value << 5) | idx;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** RFC 4226 HOTP: dynamic truncation of HMAC(key, counter). */
export function hotp(key: Buffer, counter: number, digits = TOTP_DIGITS, algorithm = 'sha1'): string {
  const msg = Buffer.alloc(8);
  msg.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac(algorithm, key).update(msg).digest();
  const offset = (mac[mac.length - 1] as number) & 0xf;
  const bin = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(bin % 10 ** digits).padStart(digits, '0');
}

/** The time step of a moment (unix ms). */
export const timeStep = (nowMs: number) => Math.floor(nowMs / 1000 / TOTP_PERIOD_SECONDS);

/** RFC 6238 TOTP of a base32 secret at a moment (unix ms). */
export function totp(secretBase32: string, nowMs: number, digits = TOTP_DIGITS): string {
  return hotp(base32Decode(secretBase32), timeStep(nowMs), digits);
}

/**
 * The time step a code belongs to, allowing one step of clock drift either way; undefined when
 * the code matches none. The caller refuses a step it has accepted before (no replay).
 */
export function matchTotp(secretBase32: string, code: string, nowMs: number): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined;
  const key = base32Decode(secretBase32);
  const now = timeStep(nowMs);
  for (const step of [now, now - 1, now + 1]) if (hotp(key, step) === code) return step;
  return undefined;
}

/** A new 160-bit secret, base32 (RFC 4226 recommends 160 bits). */
export const newTotpSecret = () => base32Encode(randomBytes(20));

/** The otpauth:// URI authenticator apps read from the QR code. */
export function otpauthUri(secret: string, username: string, issuer: string): string {
  const label = encodeURIComponent(`${issuer}:${username}`);
  const q = new URLSearchParams({
    secret,
    issuer,
    algorithm: 'SHA1',
    digits: String(TOTP_DIGITS),
    period: String(TOTP_PERIOD_SECONDS),
  });
  return `otpauth://totp/${label}?${q.toString()}`;
}

const BACKUP_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
export const BACKUP_CODE_COUNT = 4;

/** Backup codes as new-api shows them: XXXX-XXXX. */
export function newBackupCodes(count = BACKUP_CODE_COUNT): string[] {
  return Array.from({ length: count }, () => {
    let s = '';
    for (let i = 0; i < 8; i++) s += BACKUP_ALPHABET[randomInt(BACKUP_ALPHABET.length)];
    return `${s.slice(0, 4)}-${s.slice(4)}`;
  });
}

/** A backup code in its stored form (upper case, XXXX-XXXX); undefined when it cannot be one. */
export function normaliseBackupCode(code: string): string | undefined {
  const clean = code.replace(/[-\s]/g, '').toUpperCase();
  return /^[A-Z0-9]{8}$/.test(clean) ? `${clean.slice(0, 4)}-${clean.slice(4)}` : undefined;
}
