import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

const PREFIX = 'v1';

/**
 * Secrets at rest (channel keys, API token keys): AES-256-GCM with a 32-byte secret from the
 * environment (`name`, 64 hex characters: CHANNEL_KEY_SECRET, TOKEN_KEY_SECRET), a random 12-byte
 * IV per value, and the tag checked on decryption. Stored as `v1:<iv>:<tag>:<ciphertext>` (base64).
 * `digest` is an HMAC-SHA256 (hex) under a key derived from the same secret: the same value always
 * gives the same digest, so it can key lookups (an `_id`) without the value being stored.
 */
export function keyCipher(secretHex: string, name = 'CHANNEL_KEY_SECRET') {
  const secret = Buffer.from(secretHex, 'hex');
  if (secret.length !== 32) throw new Error(`${name} must be 32 bytes in hex (64 characters)`);
  const macKey = createHmac('sha256', secret).update('aigw lookup digest v1').digest();
  return {
    digest(plain: string): string {
      return createHmac('sha256', macKey).update(plain, 'utf8').digest('hex');
    },
    encrypt(plain: string): string {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', secret, iv);
      const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return [PREFIX, iv.toString('base64'), cipher.getAuthTag().toString('base64'), data.toString('base64')].join(':');
    },
    decrypt(stored: string): string {
      const [prefix, iv, tag, data] = stored.split(':');
      if (prefix !== PREFIX || !iv || !tag || data === undefined) throw new Error('not an encrypted value');
      const decipher = createDecipheriv('aes-256-gcm', secret, Buffer.from(iv, 'base64'));
      decipher.setAuthTag(Buffer.from(tag, 'base64'));
      return Buffer.concat([decipher.update(Buffer.from(data, 'base64')), decipher.final()]).toString('utf8');
    },
  };
}

export type KeyCipher = ReturnType<typeof keyCipher>;
