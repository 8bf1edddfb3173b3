import { type KeyObject, sign, verify } from 'node:crypto';
import { AppError } from '../errors.ts';

/**
 * Internal call tokens (ADR 0006): `v1.<payload>.<signature>`, both parts base64url, the payload a
 * JSON object of claims, the signature over `v1.<payload>` with the issuing service's private key
 * (Ed25519, or RSA/ECDSA with SHA-256: whatever key type the service holds).
 */

/** The end user on whose behalf the gateway calls, as signed by the gateway. */
export interface ActorClaim {
  /** user id */
  u: number;
  /** role: 1 common, 10 admin, 100 root */
  r: number;
  /** username */
  n: string;
}

/** What a token asserts. Times are Unix seconds. */
export interface TokenClaims {
  /** The calling service (its key signed the token). */
  iss: string;
  /** The called service (the proto package's domain: users, billing, ...). */
  aud: string;
  iat: number;
  exp: number;
  /** The actor, present only in the gateway's tokens for requests that carry one. */
  act?: ActorClaim;
}

/** How long a token is valid (seconds). */
export const TOKEN_TTL_S = 60;
/** Tolerated difference between the clocks of two pods (seconds), on both ends of the window. */
export const CLOCK_SKEW_S = 15;
/** Tokens valid for longer than this are refused even when correctly signed. */
export const MAX_TOKEN_LIFETIME_S = 300;

const PREFIX = 'v1.';

/** Signs claims with a private key. */
export function signToken(claims: TokenClaims, key: KeyObject): string {
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  const signed = `${PREFIX}${payload}`;
  const signature = sign(digestOf(key), Buffer.from(signed), key).toString('base64url');
  return `${signed}.${signature}`;
}

/**
 * Checks a token's signature against the issuer's public keys (any of them, for rotations) and
 * its validity window at `nowS`. Throws UNAUTHENTICATED with a reason a peer's operator can act on.
 */
export function verifyToken(
  token: string,
  publicKeys: ReadonlyMap<string, readonly KeyObject[]>,
  nowS: number,
): TokenClaims {
  if (!token.startsWith(PREFIX)) throw unauthenticated('malformed internal token');
  const dot = token.lastIndexOf('.');
  if (dot <= PREFIX.length) throw unauthenticated('malformed internal token');
  const signed = token.slice(0, dot);
  let claims: TokenClaims;
  try {
    claims = JSON.parse(Buffer.from(signed.slice(PREFIX.length), 'base64url').toString('utf8')) as TokenClaims;
  } catch {
    throw unauthenticated('malformed internal token');
  }
  if (
    typeof claims?.iss !== 'string' ||
    typeof claims.aud !== 'string' ||
    !Number.isFinite(claims.iat) ||
    !Number.isFinite(claims.exp)
  ) {
    throw unauthenticated('malformed internal token');
  }
  const keys = publicKeys.get(claims.iss);
  if (!keys?.length) throw unauthenticated(`unknown calling service ${JSON.stringify(claims.iss)}`);
  const signature = Buffer.from(token.slice(dot + 1), 'base64url');
  const data = Buffer.from(signed);
  if (!keys.some((key) => safeVerify(key, data, signature))) throw unauthenticated('bad internal token signature');
  if (claims.exp - claims.iat > MAX_TOKEN_LIFETIME_S) throw unauthenticated('internal token lives too long');
  if (claims.iat > nowS + CLOCK_SKEW_S) throw unauthenticated('internal token issued in the future (clock skew?)');
  if (claims.exp < nowS - CLOCK_SKEW_S) throw unauthenticated('internal token expired (clock skew?)');
  return claims;
}

/** Ed25519/Ed448 sign the message itself; RSA and ECDSA keys sign its SHA-256. */
function digestOf(key: KeyObject): string | null {
  const type = key.asymmetricKeyType;
  return type === 'ed25519' || type === 'ed448' ? null : 'sha256';
}

function safeVerify(key: KeyObject, data: Buffer, signature: Buffer): boolean {
  try {
    return verify(digestOf(key), data, key, signature);
  } catch {
    return false;
  }
}

function unauthenticated(message: string): AppError {
  return new AppError('UNAUTHENTICATED', message);
}
