import { AsyncLocalStorage } from 'node:async_hooks';
import type { DescMethod } from '@bufbuild/protobuf';
import { AppError } from '../errors.ts';
import { type AuthKeys, type KeySet, keysOf, loadAuthKeys } from './auth-keys.ts';
import { ACTOR_ISSUERS, audienceOf, callersOf } from './auth-policy.ts';
import { type ActorClaim, CLOCK_SKEW_S, signToken, TOKEN_TTL_S, type TokenClaims, verifyToken } from './auth-token.ts';

/** Metadata key of the internal token. */
export const AUTH_METADATA_KEY = 'authorization';
const SCHEME = 'Bearer ';

/** The client side: the `authorization` value of an outgoing call. */
export interface CallSigner {
  tokenFor(method: DescMethod, actor: ActorClaim | undefined): string;
}

/** The server side: checks the token of an incoming call (signature, audience, window, allow-list). */
export interface CallVerifier {
  verify(authorization: string | undefined, method: DescMethod): TokenClaims;
}

/** Both sides, for one service identity (or a test identity that can act as any service). */
export type InternalAuth = CallSigner & CallVerifier;

/** A token is reused until this many seconds before it expires (one signature per 40 s per peer). */
const REFRESH_BEFORE_S = 20;
/** Verified tokens are remembered (by their text) up to this many; then the memory starts over. */
const VERIFIED_CACHE_MAX = 10_000;

/**
 * Internal call authentication for one service (ADR 0006): signs a short-lived token per peer
 * service (and per actor for the gateway), cached so that a call costs a map lookup; verifies
 * incoming tokens once per token text and checks the per-method allow-list on every call.
 */
export function createInternalAuth(keys: AuthKeys, now: () => number = Date.now): InternalAuth {
  const signs = ACTOR_ISSUERS.includes(keys.self);
  const issued = new Map<string, { token: string; refreshAt: number }>();
  const verified = new Map<string, TokenClaims>();
  return {
    tokenFor(method, actor) {
      const aud = audienceOf(method.parent.typeName);
      const act = signs && actor && actor.u !== 0 ? actor : undefined;
      const cacheKey = act ? `${aud}|${act.u}|${act.r}|${act.n}` : aud;
      const nowS = Math.floor(now() / 1000);
      const cached = issued.get(cacheKey);
      if (cached && nowS < cached.refreshAt) return cached.token;
      const claims: TokenClaims = { iss: keys.self, aud, iat: nowS, exp: nowS + TOKEN_TTL_S, ...(act ? { act } : {}) };
      const token = `${SCHEME}${signToken(claims, keys.privateKey)}`;
      if (issued.size >= VERIFIED_CACHE_MAX) issued.clear();
      issued.set(cacheKey, { token, refreshAt: nowS + TOKEN_TTL_S - REFRESH_BEFORE_S });
      return token;
    },
    verify(authorization, method) {
      if (!authorization?.startsWith(SCHEME)) throw new AppError('UNAUTHENTICATED', 'missing internal credentials');
      const nowS = Math.floor(now() / 1000);
      let claims = verified.get(authorization);
      if (claims) {
        // Re-check the window only: the signature was checked when it was first seen.
        claims = verifyWindow(claims, nowS) ? claims : undefined;
        if (!claims) verified.delete(authorization);
      }
      if (!claims) {
        claims = verifyToken(authorization.slice(SCHEME.length), keys.publicKeys, nowS);
        if (verified.size >= VERIFIED_CACHE_MAX) verified.clear();
        verified.set(authorization, claims);
      }
      const aud = audienceOf(method.parent.typeName);
      if (claims.aud !== aud) {
        throw new AppError('UNAUTHENTICATED', `internal token for ${claims.aud}, not ${aud}`);
      }
      const callers = callersOf(method);
      if (callers && !callers.includes(claims.iss)) {
        throw new AppError('PERMISSION_DENIED', `${claims.iss} may not call ${method.parent.typeName}/${method.name}`);
      }
      return claims;
    },
  };
}

/** The time rules of verifyToken, without the signature. */
function verifyWindow(claims: TokenClaims, nowS: number): boolean {
  return claims.exp >= nowS - CLOCK_SKEW_S && claims.iat <= nowS + CLOCK_SKEW_S;
}

/**
 * The actor check of a call whose request carries an `aigw.common.v1.Actor`: an actor other than
 * the system (user id 0) must be exactly the one the gateway signed into the token.
 */
export function checkActor(
  claims: TokenClaims,
  actor: { userId: number; role: number; username: string } | undefined,
): void {
  if (!actor || actor.userId === 0) return;
  const act = ACTOR_ISSUERS.includes(claims.iss) ? claims.act : undefined;
  if (!act || act.u !== actor.userId || act.r !== actor.role || act.n !== actor.username) {
    throw new AppError('UNAUTHENTICATED', 'the actor is not the one the gateway signed');
  }
}

const scoped = new AsyncLocalStorage<InternalAuth>();
let processAuth: InternalAuth | undefined;

/** Sets the credentials of clients and servers created outside {@link runWithInternalAuth}. */
export function setDefaultInternalAuth(auth: InternalAuth | undefined): void {
  processAuth = auth;
}

/**
 * Runs `fn` so that the clients and servers it creates (synchronously or after awaits) use
 * `auth`: the in-process test stack runs each service under its own identity this way.
 */
export function runWithInternalAuth<T>(auth: InternalAuth, fn: () => T): T {
  return scoped.run(auth, fn);
}

/** The credentials of the current scope, if any (captured by createClient and startGrpcServer). */
export function scopedInternalAuth(): InternalAuth | undefined {
  return scoped.getStore();
}

/**
 * The process's credentials: set by {@link setDefaultInternalAuth}, else read once from
 * `GRPC_AUTH_DIR` and `SERVICE_NAME` (how every service process gets them). Throws when neither
 * is available: gRPC never runs without authentication by accident.
 */
export function defaultInternalAuth(): InternalAuth {
  if (processAuth) return processAuth;
  const dir = process.env.GRPC_AUTH_DIR;
  const self = process.env.SERVICE_NAME;
  if (!dir || !self) {
    throw new Error(
      'internal gRPC auth: set GRPC_AUTH_DIR (key directory) and SERVICE_NAME, see docs/adr/0006-internal-call-authentication.md',
    );
  }
  processAuth = createInternalAuth(loadAuthKeys(dir, self));
  return processAuth;
}

/**
 * Credentials that hold every service's key and sign each call as a service allowed to make it
 * (the gateway when it may, so that actors are signed): what test code uses to seed and inspect
 * a stack whose keys it generated. Never give a deployed process more than its own key.
 */
export function createPlatformAuth(set: KeySet, now: () => number = Date.now): InternalAuth {
  const byService = new Map<string, InternalAuth>();
  for (const svc of set.privateKeys.keys()) byService.set(svc, createInternalAuth(keysOf(set, svc), now));
  const any = byService.values().next().value;
  if (!any) throw new Error('internal gRPC auth: empty key set');
  return {
    tokenFor(method, actor) {
      const callers = callersOf(method) ?? [...byService.keys()];
      const as = callers.includes('gateway') ? 'gateway' : callers.find((c) => byService.has(c));
      const auth = as ? byService.get(as) : undefined;
      if (!auth) throw new Error(`internal gRPC auth: no key may call ${method.parent.typeName}/${method.name}`);
      return auth.tokenFor(method, actor);
    },
    verify: (authorization, method) => any.verify(authorization, method),
  };
}
