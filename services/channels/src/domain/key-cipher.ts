import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const PREFIX = 'v1';

/**
 * Channel keys at rest: AES-256-GCM with a 32-byte secret from the environment
 * (CHANNEL_KEY_SECRET, 64 hex characters), a random 12-byte IV per value, and the tag checked on
 * decryption. Stored as `v1:<iv>:<tag>:<ciphertext>` (base64).
 */
export function keyCipher(secretHex: string) {
  const secret = Buffer.from(secretHex, 'hex');
  if (secret.length !== 32) throw new Error('CHANNEL_KEY_SECRET must be 32 bytes in hex (64 characters)');
  return {
    encrypt(plain: string): string {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', secret, iv);
      const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return [PREFIX, iv.toString('base64'), cipher.getAuthTag().toString('base64'), data.toString('base64')].join(':');
    },
    decrypt(stored: string): string {
      const [prefix, iv, tag, data] = stored.split(':');
      if (prefix !== PREFIX || !iv || !tag || data === undefined) throw new Error('not an encrypted channel key');
      const decipher = createDecipheriv('aes-256-gcm', secret, Buffer.from(iv, 'base64'));
      decipher.setAuthTag(Buffer.from(tag, 'base64'));
      return Buffer.concat([decipher.update(Buffer.from(data, 'base64')), decipher.final()]).toString('utf8');
    },
  };
}

export type KeyCipher = ReturnType<typeof keyCipher>;
