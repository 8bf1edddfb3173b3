import { createHash, randomBytes } from 'node:crypto';
import { AppError, denied, invalid, precondition } from '@aigw/common/errors';
import { createRemoteJWKSet, type JWTPayload, errors as joseErrors, jwtVerify } from 'jose';

/**
 * Single sign-on with identity providers: OIDC (discovery, authorization code with PKCE, the
 * id_token verified against the provider's JWKS), Linux DO, Discord and generic OAuth 2.0
 * providers configured by admins. Each function returns what the provider vouches for or throws a
 * client-safe AppError; a provider's failures keep their cause for the logs.
 */

const TIMEOUT_MS = 10_000;

/** The account a provider vouches for, as new-api's OAuthUser. */
export interface SsoAccount {
  /** The provider's stable id of the account (OIDC `sub`, Linux DO and Discord numeric ids). */
  id: string;
  username: string;
  displayName: string;
  email: string;
}

export const randomToken = (bytes = 32) => randomBytes(bytes).toString('base64url');

/** An RFC 7636 verifier and its S256 challenge. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomToken(48);
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

async function fetchJson(
  url: string,
  init: RequestInit,
  what: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  let res: Response;
  try {
    res = await fetch(url, { ...init, redirect: 'error', signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (err) {
    throw new AppError('UNAVAILABLE', `无法连接至 ${what} 服务器，请稍后重试`, { cause: err });
  }
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw new AppError('UNAVAILABLE', `${what} 服务器返回了无法识别的数据`, { cause: err });
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new AppError('UNAVAILABLE', `${what} 服务器返回了无法识别的数据`);
  }
  return { status: res.status, body: body as Record<string, unknown> };
}

const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');

/** The parts of an OIDC discovery document the login uses. */
export interface Discovery {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  userinfo_endpoint: string;
  jwks_uri: string;
  token_endpoint_auth_methods_supported: string[];
}

const DISCOVERY_TTL_MS = 5 * 60_000;
const discoveries = new Map<string, { at: number; doc: Discovery }>();

/** Reads (and keeps for five minutes) a provider's `.well-known/openid-configuration`. */
export async function discover(wellKnown: string, what = 'OIDC'): Promise<Discovery> {
  const hit = discoveries.get(wellKnown);
  if (hit && Date.now() - hit.at < DISCOVERY_TTL_MS) return hit.doc;
  const { status, body } = await fetchJson(wellKnown, { headers: { Accept: 'application/json' } }, what);
  const doc: Discovery = {
    issuer: str(body.issuer),
    authorization_endpoint: str(body.authorization_endpoint),
    token_endpoint: str(body.token_endpoint),
    userinfo_endpoint: str(body.userinfo_endpoint),
    jwks_uri: str(body.jwks_uri),
    token_endpoint_auth_methods_supported: Array.isArray(body.token_endpoint_auth_methods_supported)
      ? body.token_endpoint_auth_methods_supported.map(str)
      : [],
  };
  if (status !== 200 || !doc.issuer || !doc.jwks_uri || !doc.token_endpoint) {
    throw precondition(`${what} 发现文档无效（缺少 issuer、jwks_uri 或 token_endpoint）`);
  }
  discoveries.set(wellKnown, { at: Date.now(), doc });
  return doc;
}

const keySets = new Map<string, ReturnType<typeof createRemoteJWKSet>>();
/** The provider's key set; jose fetches it, keeps it and refetches on an unknown key id. */
function keySet(jwksUri: string) {
  let set = keySets.get(jwksUri);
  if (!set) {
    set = createRemoteJWKSet(new URL(jwksUri), { timeoutDuration: TIMEOUT_MS });
    keySets.set(jwksUri, set);
  }
  return set;
}

/** Why an id_token was refused, in words the user can pass on to the admin. */
function idTokenProblem(err: unknown): string {
  if (err instanceof joseErrors.JWTExpired) return '已过期';
  if (err instanceof joseErrors.JWTClaimValidationFailed) {
    if (err.claim === 'iss') return '签发者（iss）不匹配';
    if (err.claim === 'aud') return '受众（aud）不匹配';
    return `声明 ${err.claim} 无效`;
  }
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) return '签名无效';
  if (err instanceof joseErrors.JWKSNoMatchingKey) return '找不到匹配的签名密钥';
  if (err instanceof joseErrors.JOSEAlgNotAllowed) return '签名算法不被允许';
  if (err instanceof joseErrors.JWKSTimeout || err instanceof joseErrors.JOSEError) return '无法校验';
  return '格式无效';
}

/**
 * Verifies an id_token: signature by a key of the provider's JWKS, `iss` = the discovered issuer,
 * `aud` includes our client id, not expired, and `nonce` = the one this browser's login sent.
 */
export async function verifyIdToken(
  idToken: string,
  expect: { jwksUri: string; issuer: string; clientId: string; nonce: string },
): Promise<JWTPayload> {
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(idToken, keySet(expect.jwksUri), {
      issuer: expect.issuer,
      audience: expect.clientId,
      requiredClaims: ['sub', 'exp', 'iat'],
      clockTolerance: 30,
    }));
  } catch (err) {
    throw new AppError('PERMISSION_DENIED', `OIDC id_token 校验失败：${idTokenProblem(err)}`, { cause: err });
  }
  if (!expect.nonce || payload.nonce !== expect.nonce) throw denied('OIDC id_token 校验失败：nonce 不匹配');
  return payload;
}

/** The token endpoint's answer. */
export interface TokenAnswer {
  access_token: string;
  id_token: string;
}

/**
 * Exchanges an authorization code at a token endpoint (RFC 6749 4.1.3, form-encoded). The client
 * authenticates with HTTP Basic (`basic`) or in the body (`post`), never both.
 */
export async function exchangeCode(
  endpoint: string,
  p: {
    code: string;
    redirectUri: string;
    clientId: string;
    clientSecret: string;
    auth: 'basic' | 'post';
    verifier?: string;
  },
  what: string,
): Promise<TokenAnswer> {
  if (!p.code) throw invalid('无效的授权码');
  const form = new URLSearchParams({ grant_type: 'authorization_code', code: p.code, redirect_uri: p.redirectUri });
  if (p.verifier) form.set('code_verifier', p.verifier);
  const headers: Record<string, string> = {
    'Content-Type': 'application/x-www-form-urlencoded',
    Accept: 'application/json',
  };
  if (p.auth === 'basic') {
    // RFC 6749 2.3.1: each part form-encoded before joining.
    const cred = `${encodeURIComponent(p.clientId)}:${encodeURIComponent(p.clientSecret)}`;
    headers.Authorization = `Basic ${Buffer.from(cred).toString('base64')}`;
  } else {
    form.set('client_id', p.clientId);
    form.set('client_secret', p.clientSecret);
  }
  const { body } = await fetchJson(endpoint, { method: 'POST', headers, body: form.toString() }, what);
  const accessToken = str(body.access_token);
  if (!accessToken) {
    const reason = str(body.error_description) || str(body.error) || str(body.message);
    throw denied(`${what} 获取 Token 失败${reason ? `：${reason}` : '，请检查设置'}`);
  }
  return { access_token: accessToken, id_token: str(body.id_token) };
}

/** GET of a user-info endpoint with the access token. */
export async function userInfo(endpoint: string, accessToken: string, what: string): Promise<Record<string, unknown>> {
  const { status, body } = await fetchJson(
    endpoint,
    { headers: { Authorization: `Bearer ${accessToken}`, Accept: 'application/json' } },
    what,
  );
  if (status !== 200) throw invalid(`${what} 获取用户信息失败`);
  return body;
}

/** Reads a dotted path (`sub`, `data.user.id`) of a JSON object. */
export function pick(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const part of path.split('.')) {
    if (!part) continue;
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

/** The OIDC account: `sub` from the verified id_token, the rest from it or the user-info answer. */
export function oidcAccount(claims: JWTPayload, info: Record<string, unknown> | undefined): SsoAccount {
  if (info && str(info.sub) && str(info.sub) !== claims.sub) {
    throw denied('OIDC 用户信息的 sub 与 id_token 不一致');
  }
  const from = (k: string) => str(info?.[k]) || str(claims[k]);
  return {
    id: str(claims.sub),
    username: from('preferred_username'),
    displayName: from('name'),
    email: from('email'),
  };
}

/** Linux DO's /api/user answer; a trust level under the admin's minimum is refused. */
export function linuxdoAccount(info: Record<string, unknown>, minimumTrustLevel: number): SsoAccount {
  const id = str(info.id);
  if (!id || id === '0') throw invalid('Linux DO 获取用户信息为空，请检查设置');
  const trust = typeof info.trust_level === 'number' ? info.trust_level : 0;
  if (trust < minimumTrustLevel) throw denied('Linux DO 信任等级未达到管理员设置的最低信任等级');
  return { id, username: str(info.username), displayName: str(info.name), email: str(info.email) };
}

/** Discord's /users/@me answer (a snowflake id, the unique username, the global display name). */
export function discordAccount(info: Record<string, unknown>): SsoAccount {
  const id = str(info.id);
  const username = str(info.username);
  if (!id || !username) throw invalid('Discord 获取用户信息为空，请检查设置');
  return {
    id,
    username,
    displayName: str(info.global_name),
    // Only an address Discord has verified identifies the person.
    email: info.verified === true ? str(info.email) : '',
  };
}

/** Field paths of a custom provider's user-info answer (new-api's defaults are OIDC claims). */
export interface FieldMapping {
  user_id_field: string;
  username_field: string;
  display_name_field: string;
  email_field: string;
}

export function mappedAccount(info: Record<string, unknown>, m: FieldMapping, what: string): SsoAccount {
  const id = str(pick(info, m.user_id_field || 'sub'));
  if (!id) throw invalid(`无法从 ${what} 的响应中提取用户 ID`);
  return {
    id,
    username: str(pick(info, m.username_field || 'preferred_username')),
    displayName: str(pick(info, m.display_name_field || 'name')),
    email: str(pick(info, m.email_field || 'email')),
  };
}

/** Builds an authorization request URL (RFC 6749 4.1.1), keeping the endpoint's own query. */
export function authorizeUrl(endpoint: string, params: Record<string, string>): string {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw invalid('授权端点地址无效，请检查设置');
  }
  for (const [k, v] of Object.entries(params)) if (v) url.searchParams.set(k, v);
  return url.toString();
}
