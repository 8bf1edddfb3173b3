import { describe, expect, it } from 'vitest';
import {
  base32Decode,
  base32Encode,
  hotp,
  matchTotp,
  newBackupCodes,
  normaliseBackupCode,
  otpauthUri,
  timeStep,
  totp,
} from './totp.ts';

// RFC 6238 appendix B: the SHA-1 seed is the ASCII "12345678901234567890"; 8-digit codes.
const SEED = Buffer.from('12345678901234567890', 'ascii');
const RFC6238_SHA1: [number, string][] = [
  [59, '94287082'],
  [1111111109, '07081804'],
  [1111111111, '14050471'],
  [1234567890, '89005924'],
  [2000000000, '69279037'],
  [20000000000, '65353130'],
];

describe('TOTP (RFC 6238)', () => {
  it('when the RFC 6238 test vectors are computed, then every code matches', () => {
    for (const [t, code] of RFC6238_SHA1) {
      expect(hotp(SEED, Math.floor(t / 30), 8)).toBe(code);
      expect(totp(base32Encode(SEED), t * 1000, 8)).toBe(code);
    }
  });

  it('when RFC 4226 HOTP vectors are computed, then the six-digit codes match', () => {
    const want = ['755224', '287082', '359152', '969429', '338314', '254676', '287922', '162583', '399871', '520489'];
    for (const [counter, code] of want.entries()) expect(hotp(SEED, counter)).toBe(code);
  });

  it('when a code is checked, then the current and the neighbouring steps match, nothing else', () => {
    const secret = base32Encode(SEED);
    const now = 1_700_000_000_000;
    const step = timeStep(now);
    expect(matchTotp(secret, hotp(SEED, step), now)).toBe(step);
    expect(matchTotp(secret, hotp(SEED, step - 1), now)).toBe(step - 1);
    expect(matchTotp(secret, hotp(SEED, step + 1), now)).toBe(step + 1);
    expect(matchTotp(secret, hotp(SEED, step - 3), now)).toBeUndefined();
    expect(matchTotp(secret, 'abcdef', now)).toBeUndefined();
  });

  it('when base32 round-trips, then the bytes come back', () => {
    expect(base32Encode(Buffer.from('foobar'))).toBe('MZXW6YTBOI');
    expect(base32Decode('mzxw6ytboi======').toString()).toBe('foobar');
  });

  it('when backup codes are made and typed loosely, then they normalise to XXXX-XXXX', () => {
    const codes = newBackupCodes();
    expect(codes).toHaveLength(4);
    for (const c of codes) expect(c).toMatch(/^[A-Z0-9]{4}-[A-Z0-9]{4}$/);
    expect(normaliseBackupCode('ab12 cd34')).toBe('AB12-CD34');
    expect(normaliseBackupCode('123456')).toBeUndefined();
  });

  it('when the otpauth URI is built, then it names the issuer, the account and the secret', () => {
    const uri = otpauthUri('JBSWY3DPEHPK3PXP', 'alice', 'AI Gateway');
    expect(uri).toBe(
      'otpauth://totp/AI%20Gateway%3Aalice?secret=JBSWY3DPEHPK3PXP&issuer=AI+Gateway&algorithm=SHA1&digits=6&period=30',
    );
  });
});
