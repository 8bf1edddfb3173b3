import { createCipheriv, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { keyCipher, previousSecrets } from './key-cipher.ts';

const A = 'aa'.repeat(32);
const B = 'bb'.repeat(32);

/** A value in the first format (`v1:<iv>:<tag>:<data>`), as rows written before key ids hold. */
function sealV1(secretHex: string, plain: string): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', Buffer.from(secretHex, 'hex'), iv);
  const data = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
  return ['v1', iv.toString('base64'), c.getAuthTag().toString('base64'), data.toString('base64')].join(':');
}

describe('key cipher', () => {
  it('when a value is sealed, then it names its secret and opens again; a first-format value opens too', () => {
    const a = keyCipher(A);
    const sealed = a.encrypt('sk-secret');
    expect(sealed.startsWith(`v2:${a.kid}:`)).toBe(true);
    expect(sealed).not.toContain('sk-secret');
    expect(a.decrypt(sealed)).toBe('sk-secret');
    expect(a.decrypt(sealV1(A, 'old-row'))).toBe('old-row');
    expect(a.stale(sealed)).toBe(false);
    expect(a.stale(sealV1(A, 'old-row'))).toBe(true);
  });

  it('when the secret is rotated, then values of the previous secret still open, are stale, and lookups try both digests', () => {
    const a = keyCipher(A);
    const b = keyCipher(B, 'TOKEN_KEY_SECRET', previousSecrets(` ${A} `));
    const old = a.encrypt('sk-rotated');
    expect(b.decrypt(old)).toBe('sk-rotated');
    expect(b.decrypt(sealV1(A, 'older'))).toBe('older');
    expect(b.stale(old)).toBe(true);
    expect(b.stale(b.encrypt('x'))).toBe(false);
    expect(b.digests('sk-rotated')).toEqual([b.digest('sk-rotated'), a.digest('sk-rotated')]);
    expect(b.digest('sk-rotated')).not.toBe(a.digest('sk-rotated'));
    // Without the previous secret the old value cannot be opened, and the error says what to set.
    expect(() => keyCipher(B, 'TOKEN_KEY_SECRET').decrypt(old)).toThrow(/TOKEN_KEY_SECRET_PREVIOUS/);
  });

  it('when a secret is not 64 hex characters, then it is refused with its name', () => {
    expect(() => keyCipher('zz'.repeat(32), 'TOKEN_KEY_SECRET')).toThrow(/TOKEN_KEY_SECRET must be 32 bytes/);
    expect(() => keyCipher(A, 'TOKEN_KEY_SECRET', ['12'])).toThrow(/TOKEN_KEY_SECRET_PREVIOUS\[0\]/);
  });
});
