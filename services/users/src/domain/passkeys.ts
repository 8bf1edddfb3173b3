import { denied, invalid, notFound, precondition } from '@aigw/common/errors';
import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
import type { OptionsReader, UserRecord, UserStore } from './ports.ts';
import { ROLE } from './ports.ts';
import { MSG } from './user-rules.ts';

/** A user's passkey as stored (one per user, as new-api). */
export interface PasskeyRecord {
  userId: number;
  /** base64url credential id. */
  credentialId: string;
  /** base64url COSE public key. */
  publicKey: string;
  signCount: number;
  transports: string[];
  aaguid: string;
  backupEligible: boolean;
  backupState: boolean;
  /** Unix seconds. */
  createdAt: number;
  lastUsedAt: number;
}

/** The passkeys collections (data/passkey-repository.ts). */
export interface PasskeyStore {
  get(userId: number): Promise<PasskeyRecord | undefined>;
  findByCredentialId(credentialId: string): Promise<PasskeyRecord | undefined>;
  /** Stores the user's passkey, replacing the one they had. */
  save(record: PasskeyRecord): Promise<void>;
  /** Moves the signature count from `fromCount` to `toCount` (atomic); false when it moved meanwhile. */
  advance(userId: number, credentialId: string, fromCount: number, toCount: number, usedAt: number): Promise<boolean>;
  remove(userId: number): Promise<boolean>;
}

export const PASSKEY_MSG = {
  disabled: '管理员未启用 Passkey 登录',
  notBound: '该用户尚未绑定 Passkey',
  userDisabled: '该用户已被禁用',
  failed: 'Passkey 验证失败，请重试或联系管理员',
  registerFailed: 'Passkey 注册失败，请重试',
  badCredential: '无效的 Passkey 凭证',
  handleMismatch: '用户句柄与凭证不匹配',
  noPeer: '无权操作同级或更高级用户的 Passkey',
  noOrigin: '无法确定 Passkey 的 Origin，请在系统设置中设置服务器地址或在 Passkey 设置中指定',
} as const;

/** How long the browser may take over a ceremony (new-api: 2 minutes). */
export const CEREMONY_MS = 120_000;

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * The relying party of the deployment: origins from passkey.origins, else ServerAddress's origin;
 * the RP ID from passkey.rp_id, else the first origin's host name. Plain-HTTP origins only for
 * loopback hosts (browsers treat them as secure) or when passkey.allow_insecure_origin is on.
 */
export function relyingParty(options: OptionsReader): { id: string; name: string; origins: string[] } {
  const listed = options.text('passkey.origins').split(',');
  const raw = listed.some((o) => o.trim()) ? listed : [options.text('ServerAddress')];
  const origins: string[] = [];
  for (const entry of raw) {
    const text = entry.trim();
    if (!text) continue;
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw precondition(PASSKEY_MSG.noOrigin);
    }
    if (url.protocol === 'http:' && !LOOPBACK.has(url.hostname) && !options.bool('passkey.allow_insecure_origin')) {
      throw precondition(`Passkey 不允许使用不安全的 Origin: ${url.origin}`);
    }
    origins.push(url.origin);
  }
  const first = origins[0];
  if (!first) throw precondition(PASSKEY_MSG.noOrigin);
  const id = options.text('passkey.rp_id').trim() || new URL(first).hostname;
  const name = options.text('passkey.rp_display_name').trim() || options.text('SystemName') || 'AI Gateway';
  return { id, name, origins };
}

type Verification = 'required' | 'preferred' | 'discouraged';
const verificationOf = (options: OptionsReader): Verification => {
  const v = options.text('passkey.user_verification');
  return v === 'required' || v === 'discouraged' ? v : 'preferred';
};

/** The browser's JSON of a credential, checked for the fields every answer carries. */
function credentialJson<T extends RegistrationResponseJSON | AuthenticationResponseJSON>(text: string): T {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalid(PASSKEY_MSG.badCredential);
  }
  const c = parsed as Partial<T> | null;
  if (
    !c ||
    typeof c !== 'object' ||
    typeof c.id !== 'string' ||
    c.type !== 'public-key' ||
    typeof c.response !== 'object'
  ) {
    throw invalid(PASSKEY_MSG.badCredential);
  }
  return c as T;
}

/** What the passkey factories need; `now` is the clock of the stored times. */
type PasskeyDeps = { store: PasskeyStore; users: UserStore; options: OptionsReader; now?: () => number };

/** Refuses every ceremony while passkeys are off (option passkey.enabled). */
function checkEnabled(options: OptionsReader): void {
  if (!options.bool('passkey.enabled')) throw precondition(PASSKEY_MSG.disabled);
}

/** The user of a ceremony: present and enabled. */
async function liveUser(users: UserStore, id: number): Promise<UserRecord> {
  const user = await users.findById(id);
  if (!user) throw notFound(MSG.userNotFound);
  if (user.status !== 1) throw invalid(PASSKEY_MSG.userDisabled);
  return user;
}

/** Binding a passkey: the creation options, then the browser's attestation verified and stored. */
export function passkeyRegistration(deps: PasskeyDeps) {
  const { store, users, options } = deps;
  const now = deps.now ?? Date.now;

  return {
    async beginRegistration(userId: number) {
      checkEnabled(options);
      const user = await liveUser(users, userId);
      const rp = relyingParty(options);
      const existing = await store.get(userId);
      const attachment = options.text('passkey.attachment_preference');
      const opts = await generateRegistrationOptions({
        rpName: rp.name,
        rpID: rp.id,
        userName: user.username,
        userDisplayName: user.display_name || user.username,
        // The user handle is the decimal user id (new-api's WebAuthnID).
        userID: new TextEncoder().encode(String(user.id)),
        attestationType: 'none',
        timeout: CEREMONY_MS,
        excludeCredentials: existing ? [{ id: existing.credentialId, transports: existing.transports }] : [],
        authenticatorSelection: {
          residentKey: 'required',
          requireResidentKey: true,
          userVerification: verificationOf(options),
          ...(attachment === 'platform' || attachment === 'cross-platform'
            ? { authenticatorAttachment: attachment }
            : {}),
        },
      });
      return { optionsJson: JSON.stringify(opts), challenge: opts.challenge };
    },

    async finishRegistration(userId: number, credential: string, expectedChallenge: string) {
      checkEnabled(options);
      await liveUser(users, userId);
      const rp = relyingParty(options);
      const response = credentialJson<RegistrationResponseJSON>(credential);
      const result = await verifyRegistrationResponse({
        response,
        expectedChallenge,
        expectedOrigin: rp.origins,
        expectedRPID: rp.id,
        requireUserVerification: verificationOf(options) === 'required',
      }).catch(() => undefined);
      if (!result?.verified) throw invalid(PASSKEY_MSG.registerFailed);
      const info = result.registrationInfo;
      const taken = await store.findByCredentialId(info.credential.id);
      if (taken && taken.userId !== userId) throw invalid(PASSKEY_MSG.registerFailed);
      const seconds = Math.floor(now() / 1000);
      await store.save({
        userId,
        credentialId: info.credential.id,
        publicKey: Buffer.from(info.credential.publicKey).toString('base64url'),
        signCount: info.credential.counter,
        transports: info.credential.transports ?? response.response.transports ?? [],
        aaguid: info.aaguid,
        backupEligible: info.credentialDeviceType === 'multiDevice',
        backupState: info.credentialBackedUp,
        createdAt: seconds,
        lastUsedAt: 0,
      });
    },
  };
}

/** Signing in (or re-verifying) with a passkey: the request options, then the assertion verified and its counter advanced. */
export function passkeyAssertion(deps: PasskeyDeps) {
  const { store, users, options } = deps;
  const now = deps.now ?? Date.now;

  return {
    /** Login (userId 0: any discoverable credential) or re-verification of the user's own. */
    async beginAssertion(userId: number) {
      checkEnabled(options);
      const rp = relyingParty(options);
      let allow: { id: string; transports: string[] }[] | undefined;
      if (userId) {
        await liveUser(users, userId);
        const own = await store.get(userId);
        if (!own) throw notFound(PASSKEY_MSG.notBound);
        allow = [{ id: own.credentialId, transports: own.transports }];
      }
      const opts = await generateAuthenticationOptions({
        rpID: rp.id,
        timeout: CEREMONY_MS,
        userVerification: verificationOf(options),
        ...(allow ? { allowCredentials: allow } : {}),
      });
      return { optionsJson: JSON.stringify(opts), challenge: opts.challenge };
    },

    async finishAssertion(userId: number, credential: string, expectedChallenge: string): Promise<UserRecord> {
      checkEnabled(options);
      const rp = relyingParty(options);
      const response = credentialJson<AuthenticationResponseJSON>(credential);
      const record = await store.findByCredentialId(response.id);
      if (!record || (userId && record.userId !== userId)) throw invalid(PASSKEY_MSG.failed);
      const handle = response.response?.userHandle;
      if (handle && Buffer.from(handle, 'base64url').toString() !== String(record.userId)) {
        throw invalid(PASSKEY_MSG.handleMismatch);
      }
      const user = await liveUser(users, record.userId);
      const result = await verifyAuthenticationResponse({
        response,
        expectedChallenge,
        expectedOrigin: rp.origins,
        expectedRPID: rp.id,
        credential: {
          id: record.credentialId,
          publicKey: new Uint8Array(Buffer.from(record.publicKey, 'base64url')),
          counter: record.signCount,
          transports: record.transports,
        },
        requireUserVerification: verificationOf(options) === 'required',
      }).catch(() => undefined);
      if (!result?.verified) throw invalid(PASSKEY_MSG.failed);
      const next = result.authenticationInfo.newCounter;
      const usedAt = Math.floor(now() / 1000);
      if (!(await store.advance(record.userId, record.credentialId, record.signCount, next, usedAt))) {
        throw invalid(PASSKEY_MSG.failed);
      }
      return user;
    },
  };
}

/** A user's passkey: whether bound, unbinding it, and an admin's reset. */
export function passkeyManagement(deps: PasskeyDeps) {
  const { store, users } = deps;

  return {
    async status(userId: number) {
      const r = await store.get(userId);
      return { enabled: r !== undefined, lastUsedAt: r?.lastUsedAt ?? 0, createdAt: r?.createdAt ?? 0 };
    },

    async remove(userId: number) {
      if (!(await store.remove(userId))) throw notFound(PASSKEY_MSG.notBound);
    },

    /** DELETE /api/user/:id/reset_passkey: never on an equal or higher role (root may act on anyone). */
    async adminReset(actor: { userId: number; role: number }, id: number) {
      const target = await users.findById(id, true);
      if (!target) throw notFound(MSG.userNotFound);
      if (actor.role < ROLE.root && target.role >= actor.role && target.id !== actor.userId) {
        throw denied(PASSKEY_MSG.noPeer);
      }
      if (!(await store.remove(id))) throw invalid(PASSKEY_MSG.notBound);
    },
  };
}

/**
 * Passkey use cases (new-api's /api/user/passkey/*): ceremony options, verification of the
 * browser's answers against the challenge the gateway kept, and the stored credential with its
 * signature counter. The library (@simplewebauthn/server) checks challenge, origin, RP ID hash,
 * flags and the signature; the counter is advanced atomically here.
 */
export function passkeys(deps: PasskeyDeps) {
  return { ...passkeyRegistration(deps), ...passkeyAssertion(deps), ...passkeyManagement(deps) };
}

export type Passkeys = ReturnType<typeof passkeys>;
