/**
 * Vertex AI (type 41) credentials: the channel key is a Google service-account JSON; the relay
 * signs a JWT with its private key (RS256), trades it at the account's token_uri for an OAuth
 * access token (the jwt-bearer grant), and keeps the token until shortly before it expires.
 * Concurrent requests of one account share one exchange.
 */
import { importPKCS8, SignJWT } from 'jose';
import type { UpstreamClient } from '../exchange/ports.ts';

export interface ServiceAccount {
  clientEmail: string;
  privateKey: string;
  privateKeyId: string;
  projectId: string;
  tokenUri: string;
}

export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
const DEFAULT_TOKEN_URI = 'https://oauth2.googleapis.com/token';

/** Reads the service-account JSON of a channel key; throws with a message naming what is missing. */
export function parseServiceAccount(key: string): ServiceAccount {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(key) as Record<string, unknown>;
  } catch {
    throw new Error('Vertex AI 渠道密钥应为服务账号 JSON');
  }
  const str = (k: string) => (typeof o[k] === 'string' ? (o[k] as string) : '');
  const sa = {
    clientEmail: str('client_email'),
    privateKey: str('private_key'),
    privateKeyId: str('private_key_id'),
    projectId: str('project_id'),
    tokenUri: str('token_uri') || DEFAULT_TOKEN_URI,
  };
  for (const [field, v] of [
    ['client_email', sa.clientEmail],
    ['private_key', sa.privateKey],
    ['project_id', sa.projectId],
  ])
    if (!v) throw new Error(`Vertex AI 服务账号 JSON 缺少 ${field}`);
  return sa;
}

/**
 * The signed assertion of the jwt-bearer grant (valid one hour from `nowSec`). Google issues
 * service-account keys as PKCS#8 PEM, which is what importPKCS8 reads.
 */
export async function serviceAccountJwt(sa: ServiceAccount, nowSec: number): Promise<string> {
  const key = await importPKCS8(sa.privateKey, 'RS256');
  return new SignJWT({ scope: CLOUD_PLATFORM_SCOPE })
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT', ...(sa.privateKeyId ? { kid: sa.privateKeyId } : {}) })
    .setIssuer(sa.clientEmail)
    .setAudience(sa.tokenUri)
    .setIssuedAt(nowSec)
    .setExpirationTime(nowSec + 3600)
    .sign(key);
}

/** A token exchange the provider refused (bad key, revoked account): not the request's fault. */
export class TokenExchangeError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'TokenExchangeError';
  }
}

interface Cached {
  token: string;
  /** ms epoch after which the token is not used any more. */
  until: number;
}

/** Refresh this long before the provider's expiry. */
const MARGIN_MS = 5 * 60_000;

/** Access tokens per service account, fetched through the relay's upstream client. */
export function createGoogleTokenCache(http: UpstreamClient, now: () => number = Date.now) {
  const cache = new Map<string, Cached>();
  const inflight = new Map<string, Promise<string>>();

  async function exchange(sa: ServiceAccount, id: string): Promise<string> {
    const body = new URLSearchParams({
      grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
      assertion: await serviceAccountJwt(sa, Math.floor(now() / 1000)),
    }).toString();
    const res = await http.send({
      url: sa.tokenUri,
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body,
    });
    const text = (await res.bytes()).toString('utf8');
    let o: Record<string, unknown> = {};
    try {
      o = JSON.parse(text) as Record<string, unknown>;
    } catch {
      // handled below
    }
    if (res.status !== 200 || typeof o.access_token !== 'string') {
      const why = String(o.error_description ?? o.error ?? text.slice(0, 200));
      throw new TokenExchangeError(res.status === 200 ? 502 : res.status, `Vertex AI 获取访问令牌失败: ${why}`);
    }
    const ttl = Number(o.expires_in ?? 3600) * 1000;
    cache.set(id, { token: o.access_token, until: now() + Math.max(0, ttl - MARGIN_MS) });
    return o.access_token;
  }

  return {
    /** A valid access token for the account (cached; one exchange at a time per account). */
    async token(sa: ServiceAccount): Promise<string> {
      const id = `${sa.clientEmail}\n${sa.privateKeyId}\n${sa.tokenUri}`;
      const hit = cache.get(id);
      if (hit && hit.until > now()) return hit.token;
      let p = inflight.get(id);
      if (!p) {
        p = exchange(sa, id).finally(() => inflight.delete(id));
        inflight.set(id, p);
      }
      return p;
    },
    /** Drops an account's token (after the API answered 401 with it). */
    forget(sa: ServiceAccount): void {
      cache.delete(`${sa.clientEmail}\n${sa.privateKeyId}\n${sa.tokenUri}`);
    },
  };
}

export type GoogleTokenCache = ReturnType<typeof createGoogleTokenCache>;
