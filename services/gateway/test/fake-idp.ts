import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from 'jose';
import { json, startFakeServer } from './accounts-harness.ts';

/** How the next id_token is spoiled (each a way a forged or replayed token looks). */
export type Spoil = 'signature' | 'audience' | 'issuer' | 'nonce' | 'expired';

export interface IdpAccount {
  sub: string;
  email: string;
  name: string;
  preferred_username: string;
}

interface Grant {
  clientId: string;
  redirectUri: string;
  challenge: string;
  method: string;
  nonce: string;
  account: IdpAccount;
  spoil?: Spoil;
}

const form = (body: string) => Object.fromEntries(new URLSearchParams(body));
const basic = (req: IncomingMessage): [string, string] | undefined => {
  const m = /^Basic (.+)$/.exec(req.headers.authorization ?? '');
  if (!m) return undefined;
  const [id, secret] = Buffer.from(m[1]!, 'base64').toString().split(':');
  return [decodeURIComponent(id ?? ''), decodeURIComponent(secret ?? '')];
};

/**
 * An OpenID Provider speaking the real protocol: a discovery document, a JWKS with an RSA key made
 * by jose, an authorization endpoint that redirects back with a code, a token endpoint that checks
 * client_secret_basic and the PKCE S256 verifier, signed RS256 id_tokens and a user-info endpoint.
 */
export async function startFakeOidc(client: { id: string; secret: string }) {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const other = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  const grants = new Map<string, Grant>();
  const tokens = new Map<string, IdpAccount>();
  let counter = 0;
  /** The account the next authorization signs in, and how its id_token is spoiled. */
  const next: { account?: IdpAccount; spoil?: Spoil } = {};
  let base = '';

  const server = await startFakeServer({
    'GET /.well-known/openid-configuration': (_req, _body, res) =>
      json(res, 200, {
        issuer: base,
        authorization_endpoint: `${base}/authorize`,
        token_endpoint: `${base}/token`,
        userinfo_endpoint: `${base}/userinfo`,
        jwks_uri: `${base}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        token_endpoint_auth_methods_supported: ['client_secret_basic'],
        code_challenge_methods_supported: ['S256'],
      }),
    'GET /jwks': (_req, _body, res) => json(res, 200, { keys: [jwk] }),
    'GET /authorize': (req, _body, res: ServerResponse) => {
      const q = new URL(req.url ?? '', base).searchParams;
      if (q.get('response_type') !== 'code' || q.get('client_id') !== client.id || !next.account) {
        json(res, 400, { error: 'invalid_request' });
        return;
      }
      counter += 1;
      const code = `oidc-code-${counter}`;
      grants.set(code, {
        clientId: client.id,
        redirectUri: q.get('redirect_uri') ?? '',
        challenge: q.get('code_challenge') ?? '',
        method: q.get('code_challenge_method') ?? '',
        nonce: q.get('nonce') ?? '',
        account: next.account,
        spoil: next.spoil,
      });
      next.spoil = undefined;
      const back = new URL(q.get('redirect_uri') ?? '');
      back.searchParams.set('code', code);
      back.searchParams.set('state', q.get('state') ?? '');
      res.writeHead(302, { Location: back.toString() }).end();
    },
    'POST /token': async (req, body, res) => {
      const f = form(body);
      const cred = basic(req);
      if (!cred || cred[0] !== client.id || cred[1] !== client.secret || f.client_secret) {
        json(res, 401, { error: 'invalid_client' });
        return;
      }
      const grant = grants.get(f.code ?? '');
      grants.delete(f.code ?? '');
      const verifierOk =
        grant?.method === 'S256' &&
        createHash('sha256')
          .update(f.code_verifier ?? '')
          .digest('base64url') === grant.challenge;
      if (f.grant_type !== 'authorization_code' || !grant || grant.redirectUri !== f.redirect_uri || !verifierOk) {
        json(res, 400, { error: 'invalid_grant', error_description: 'PKCE verification failed' });
        return;
      }
      const now = Math.floor(Date.now() / 1000);
      const claims: JWTPayload = {
        email: grant.account.email,
        name: grant.account.name,
        nonce: grant.spoil === 'nonce' ? 'another-nonce' : grant.nonce,
      };
      const idToken = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: 'k1', typ: 'JWT' })
        .setIssuer(grant.spoil === 'issuer' ? 'https://evil.example' : base)
        .setAudience(grant.spoil === 'audience' ? 'another-client' : grant.clientId)
        .setSubject(grant.account.sub)
        .setIssuedAt(grant.spoil === 'expired' ? now - 7200 : now)
        .setExpirationTime(grant.spoil === 'expired' ? now - 3600 : now + 600)
        .sign(grant.spoil === 'signature' ? other.privateKey : privateKey);
      const accessToken = `at-${f.code}`;
      tokens.set(accessToken, grant.account);
      json(res, 200, { access_token: accessToken, token_type: 'Bearer', expires_in: 600, id_token: idToken });
    },
    'GET /userinfo': (req, _body, res) => {
      const account = tokens.get((req.headers.authorization ?? '').replace(/^Bearer /, ''));
      if (!account) json(res, 401, { error: 'invalid_token' });
      else json(res, 200, account);
    },
  });
  base = server.url;
  return { ...server, next, grants };
}

/**
 * A plain OAuth 2.0 provider (Linux DO Connect, Discord, an admin's custom provider): an
 * authorization endpoint that redirects back with a code, a form-encoded token endpoint checking
 * the client's credentials (HTTP Basic or in the body), and a user endpoint answering `user(key)`.
 */
export async function startFakeOAuth2(opts: {
  client: { id: string; secret: string };
  auth: 'basic' | 'post';
  paths: { authorize: string; token: string; user: string };
  /** The provider's user JSON for an account key. */
  user: (key: string) => unknown;
  /** The provider's answer to a bad code (each provider's real error body). */
  badGrant: unknown;
}) {
  const codes = new Map<string, { key: string; redirectUri: string; challenge: string }>();
  const tokens = new Map<string, string>();
  let counter = 0;
  const next: { key?: string } = {};
  let base = '';
  const server = await startFakeServer({
    [`GET ${opts.paths.authorize}`]: (req, _body, res) => {
      const q = new URL(req.url ?? '', base).searchParams;
      if (q.get('client_id') !== opts.client.id || q.get('response_type') !== 'code' || !next.key) {
        json(res, 400, { error: 'invalid_request' });
        return;
      }
      counter += 1;
      const code = `code-${counter}`;
      const challenge = q.get('code_challenge') ?? '';
      codes.set(code, { key: next.key, redirectUri: q.get('redirect_uri') ?? '', challenge });
      const back = new URL(q.get('redirect_uri') ?? '');
      back.searchParams.set('code', code);
      back.searchParams.set('state', q.get('state') ?? '');
      res.writeHead(302, { Location: back.toString() }).end();
    },
    [`POST ${opts.paths.token}`]: (req, body, res) => {
      const f = form(body);
      const cred = opts.auth === 'basic' ? basic(req) : [f.client_id, f.client_secret];
      if (cred?.[0] !== opts.client.id || cred[1] !== opts.client.secret) {
        json(res, 401, { error: 'invalid_client' });
        return;
      }
      const grant = codes.get(f.code ?? '');
      codes.delete(f.code ?? '');
      const pkceOk =
        !grant?.challenge ||
        createHash('sha256')
          .update(f.code_verifier ?? '')
          .digest('base64url') === grant.challenge;
      if (f.grant_type !== 'authorization_code' || !grant || grant.redirectUri !== f.redirect_uri || !pkceOk) {
        json(res, 400, opts.badGrant);
        return;
      }
      const token = `at-${f.code}`;
      tokens.set(token, grant.key);
      json(res, 200, {
        access_token: token,
        token_type: 'Bearer',
        expires_in: 604800,
        refresh_token: `rt-${f.code}`,
        scope: 'identify email',
      });
    },
    [`GET ${opts.paths.user}`]: (req, _body, res) => {
      const key = tokens.get((req.headers.authorization ?? '').replace(/^Bearer /, ''));
      if (key === undefined) json(res, 401, { message: '401: Unauthorized', code: 0 });
      else json(res, 200, opts.user(key));
    },
  });
  base = server.url;
  return { ...server, next };
}
