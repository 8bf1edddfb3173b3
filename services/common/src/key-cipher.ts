import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';

interface Secret {
  /** The first 8 hex characters of the secret's SHA-256: which secret a value was sealed with. */
  kid: string;
  key: Buffer;
  macKey: Buffer;
}

function secretOf(hex: string, name: string): Secret {
  const key = Buffer.from(hex, 'hex');
  if (key.length !== 32 || !/^[0-9a-fA-F]{64}$/.test(hex))
    throw new Error(`${name} must be 32 bytes in hex (64 characters)`);
  return {
    kid: createHash('sha256').update(key).digest('hex').slice(0, 8),
    key,
    macKey: createHmac('sha256', key).update('aigw lookup digest v1').digest(),
  };
}

/**
 * Secrets at rest (channel keys, API token keys, TOTP secrets): AES-256-GCM with a 32-byte secret
 * from the environment (`name`, 64 hex characters: CHANNEL_KEY_SECRET, TOKEN_KEY_SECRET), a random
 * 12-byte IV per value, and the tag checked on decryption. Stored as
 * `v2:<kid>:<iv>:<tag>:<ciphertext>` (base64), `kid` naming the secret it was sealed with; values
 * of the first format, `v1:<iv>:<tag>:<ciphertext>`, are still read.
 *
 * `digest` is an HMAC-SHA256 (hex) under a key derived from the secret: the same value always gives
 * the same digest, so it can key lookups (an `_id`) without the value being stored.
 *
 * Rotation (docs/security.md): the new secret in `name`, the old ones in `previous` (`<name>_PREVIOUS`,
 * comma-separated). Values sealed with a previous secret are still opened, lookups try every
 * secret's digest (`digests`), and `stale` tells which stored values a sweep should seal again.
 */
export function keyCipher(secretHex: string, name = 'CHANNEL_KEY_SECRET', previous: readonly string[] = []) {
  const current = secretOf(secretHex, name);
  const older = previous.filter(Boolean).map((hex, i) => secretOf(hex, `${name}_PREVIOUS[${i}]`));
  const all = [current, ...older.filter((s) => s.kid !== current.kid)];
  const byKid = new Map(all.map((s) => [s.kid, s]));
  const mac = (s: Secret, plain: string) => createHmac('sha256', s.macKey).update(plain, 'utf8').digest('hex');
  const open = (s: Secret, iv: string, tag: string, data: string) => {
    const decipher = createDecipheriv('aes-256-gcm', s.key, Buffer.from(iv, 'base64'));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64')), decipher.final()]).toString('utf8');
  };
  return {
    /** The lookup digest under the current secret. */
    digest(plain: string): string {
      return mac(current, plain);
    },
    /** The digests under every secret, current first (lookups while a rotation is under way). */
    digests(plain: string): string[] {
      return all.map((s) => mac(s, plain));
    },
    encrypt(plain: string): string {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', current.key, iv);
      const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return [
        'v2',
        current.kid,
        iv.toString('base64'),
        cipher.getAuthTag().toString('base64'),
        data.toString('base64'),
      ].join(':');
    },
    decrypt(stored: string): string {
      const parts = stored.split(':');
      if (parts[0] === 'v2' && parts.length === 5) {
        const [, kid, iv, tag, data] = parts as [string, string, string, string, string];
        const s = byKid.get(kid);
        if (!s) throw new Error(`sealed with a secret not configured (kid ${kid}): set ${name}_PREVIOUS`);
        return open(s, iv, tag, data);
      }
      if (parts[0] === 'v1' && parts.length === 4) {
        const [, iv, tag, data] = parts as [string, string, string, string];
        let last: unknown;
        for (const s of all) {
          try {
            return open(s, iv, tag, data);
          } catch (err) {
            last = err;
          }
        }
        throw last;
      }
      throw new Error('not an encrypted value');
    },
    /** Whether a stored value should be sealed again with the current secret. */
    stale(stored: string): boolean {
      return !stored.startsWith(`v2:${current.kid}:`);
    },
    /** The current secret's id (logs of a rotation). */
    kid: current.kid,
  };
}

export type KeyCipher = ReturnType<typeof keyCipher>;

/** `<NAME>_PREVIOUS` of the environment: old secrets still read during a rotation (comma-separated). */
export function previousSecrets(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}
