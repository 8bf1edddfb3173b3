import { createHash } from 'node:crypto';

export const ACCESS_TOKEN_DIGEST_PREFIX = 'sha256:';

/**
 * How a system access token is stored: its SHA-256 (the token is 32 random characters, so a plain
 * digest cannot be reversed by guessing), prefixed so rows from before hashing are told apart.
 */
export const accessTokenDigest = (token: string) =>
  `${ACCESS_TOKEN_DIGEST_PREFIX}${createHash('sha256').update(token, 'utf8').digest('hex')}`;
