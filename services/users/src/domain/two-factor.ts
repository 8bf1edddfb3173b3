import { AppError, denied, invalid, notFound, precondition } from '@aigw/common/errors';
import type { OptionsReader, UserRecord, UserStore } from './ports.ts';
import { ROLE } from './ports.ts';
import { matchTotp, newBackupCodes, newTotpSecret, normaliseBackupCode, otpauthUri } from './totp.ts';
import { MSG } from './user-rules.ts';

/** Wrong codes in a row before the factor locks, and for how long (new-api: 5, 300 s). */
export const MAX_FAILURES = 5;
export const LOCK_MS = 300_000;

/** A user's TOTP factor as stored (the secret still encrypted). */
export interface TwoFactorRecord {
  userId: number;
  secret: string;
  enabled: boolean;
  failedAttempts: number;
  lockedUntil: number;
  lastStep: number;
}

/** The two_fa collections (data/two-factor-repository.ts). */
export interface TwoFactorStore {
  get(userId: number): Promise<TwoFactorRecord | undefined>;
  /** Stores a pending (not yet enabled) factor with its backup codes; false when one is enabled. */
  createPending(userId: number, encryptedSecret: string, codeDigests: string[]): Promise<boolean>;
  /** Turns a pending factor on, remembering the step of the code that proved it; false when none. */
  enable(userId: number, step: number): Promise<boolean>;
  remove(userId: number): Promise<boolean>;
  /** Accepts a TOTP step newer than the last one accepted (atomic); false on a replay. */
  acceptStep(userId: number, step: number): Promise<boolean>;
  /** Spends an unused backup code (atomic); false when there is none. */
  spendBackupCode(userId: number, digest: string): Promise<boolean>;
  /** Counts a wrong code; answers the lock end (unix ms) when this one locked the factor, else 0. */
  recordFailure(userId: number, maxFailures: number, lockMs: number): Promise<number>;
  replaceBackupCodes(userId: number, digests: string[]): Promise<void>;
  unusedBackupCodes(userId: number): Promise<number>;
  countEnabled(): Promise<number>;
  countUsers(): Promise<number>;
  /** Every stored factor's sealed secret (the sweep after a rotation of TOTP_KEY_SECRET). */
  sealedSecrets(): Promise<{ userId: number; secret: string }[]>;
  /** Replaces a sealed secret if it is still `from` (a factor set up again meanwhile wins). */
  replaceSecret(userId: number, from: string, to: string): Promise<boolean>;
}

/** Encrypts secrets at rest (AES-256-GCM) and digests backup codes (keyed HMAC). */
export interface SecretBox {
  encrypt(plain: string): string;
  decrypt(stored: string): string;
  digest(plain: string): string;
  /** The digests under every configured secret, current first (codes made before a rotation). */
  digests(plain: string): string[];
  /** Whether a sealed value was sealed with an earlier secret. */
  stale(stored: string): boolean;
}

export const TWO_FA_MSG = {
  alreadyOn: '用户已启用2FA，请先禁用后重新设置',
  setupFirst: '请先完成2FA初始化设置',
  alreadyEnabled: '2FA已经启用',
  notEnabled: '用户未启用2FA',
  wrongCode: '验证码或备用码错误，请重试',
  codeLength: '验证码必须是6位数字',
  codeDigits: '验证码只能包含数字',
  noPeer: '无权操作同级或更高级用户的2FA设置',
} as const;

const pad = (n: number) => String(n).padStart(2, '0');
const clock = (ms: number) => {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
};
const lockedError = (until: number) => new AppError('RESOURCE_EXHAUSTED', `账户已被锁定，请在${clock(until)}后重试`);

/** new-api's check of a TOTP code's form (spaces ignored). */
function numericCode(code: string): string {
  const clean = code.replace(/\s/g, '');
  if (clean.length !== 6) throw invalid(TWO_FA_MSG.codeLength);
  if (!/^\d{6}$/.test(clean)) throw invalid(TWO_FA_MSG.codeDigits);
  return clean;
}

/**
 * TOTP two-factor use cases (new-api's /api/user/2fa/*): setup stores a pending secret and four
 * backup codes, a first valid code enables it; login, disable and new backup codes need a code.
 * Each TOTP step is good once, each backup code once; five wrong codes in a row lock the factor
 * for five minutes.
 */
export function twoFactor(deps: {
  store: TwoFactorStore;
  users: UserStore;
  box: SecretBox;
  options: OptionsReader;
  now?: () => number;
}) {
  const { store, users, box, options } = deps;
  const now = deps.now ?? Date.now;
  const codeDigest = (userId: number, code: string) => box.digest(`2fa-backup:${userId}:${code}`);
  const newCodes = (userId: number) => {
    const codes = newBackupCodes();
    return { codes, digests: codes.map((c) => codeDigest(userId, c)) };
  };
  const liveUser = async (id: number): Promise<UserRecord> => {
    const user = await users.findById(id);
    if (!user) throw notFound(MSG.userNotFound);
    return user;
  };
  const enabledFactor = async (userId: number) => {
    const f = await store.get(userId);
    if (!f?.enabled) throw invalid(TWO_FA_MSG.notEnabled);
    return f;
  };
  const failed = async (userId: number) => {
    const until = await store.recordFailure(userId, MAX_FAILURES, LOCK_MS);
    if (until) throw lockedError(until);
    throw invalid(TWO_FA_MSG.wrongCode);
  };

  /** A TOTP code (or, with `backup`, a backup code) of an enabled factor; throws when wrong. */
  async function check(f: TwoFactorRecord, code: string, backup: boolean): Promise<void> {
    if (f.lockedUntil > now()) throw lockedError(f.lockedUntil);
    const clean = code.replace(/\s/g, '');
    if (/^\d{6}$/.test(clean)) {
      const step = matchTotp(box.decrypt(f.secret), clean, now());
      if (step !== undefined && step > f.lastStep && (await store.acceptStep(f.userId, step))) return;
    } else if (!backup) numericCode(clean);
    if (backup) {
      const normal = normaliseBackupCode(code);
      // Codes made before a rotation of TOTP_KEY_SECRET are digests under the previous secret.
      if (normal)
        for (const digest of box.digests(`2fa-backup:${f.userId}:${normal}`))
          if (await store.spendBackupCode(f.userId, digest)) return;
    }
    await failed(f.userId);
  }

  return {
    async status(userId: number) {
      const f = await store.get(userId);
      return {
        enabled: f?.enabled ?? false,
        locked: (f?.lockedUntil ?? 0) > now(),
        backupCodesRemaining: f?.enabled ? await store.unusedBackupCodes(userId) : 0,
      };
    },

    async setup(userId: number) {
      const user = await liveUser(userId);
      if ((await store.get(userId))?.enabled) throw precondition(TWO_FA_MSG.alreadyOn);
      const secret = newTotpSecret();
      const { codes, digests } = newCodes(userId);
      if (!(await store.createPending(userId, box.encrypt(secret), digests))) throw precondition(TWO_FA_MSG.alreadyOn);
      const issuer = options.text('SystemName') || 'AI Gateway';
      return { secret, qrCodeData: otpauthUri(secret, user.username, issuer), backupCodes: codes };
    },

    async enable(userId: number, code: string) {
      const clean = numericCode(code);
      const f = await store.get(userId);
      if (!f) throw invalid(TWO_FA_MSG.setupFirst);
      if (f.enabled) throw invalid(TWO_FA_MSG.alreadyEnabled);
      const step = matchTotp(box.decrypt(f.secret), clean, now());
      if (step === undefined) throw invalid(TWO_FA_MSG.wrongCode);
      if (!(await store.enable(userId, step))) throw invalid(TWO_FA_MSG.alreadyEnabled);
    },

    async disable(userId: number, code: string) {
      await check(await enabledFactor(userId), code, true);
      await store.remove(userId);
    },

    async regenerateBackupCodes(userId: number, code: string) {
      await check(await enabledFactor(userId), code, false);
      const { codes, digests } = newCodes(userId);
      await store.replaceBackupCodes(userId, digests);
      return codes;
    },

    /** The second step of a password login. */
    async verifyLogin(userId: number, code: string): Promise<UserRecord> {
      const user = await liveUser(userId);
      if (user.status !== 1) throw invalid('用户已被禁用');
      await check(await enabledFactor(userId), code, true);
      return user;
    },

    async isEnabled(userId: number): Promise<boolean> {
      return (await store.get(userId))?.enabled ?? false;
    },

    async stats() {
      const [totalUsers, enabledUsers] = await Promise.all([store.countUsers(), store.countEnabled()]);
      return { totalUsers, enabledUsers };
    },

    /** DELETE /api/user/:id/2fa: never on an equal or higher role (root may act on anyone). */
    async adminDisable(actor: { userId: number; role: number }, id: number) {
      const target = await users.findById(id, true);
      if (!target) throw notFound(MSG.userNotFound);
      if (actor.role < ROLE.root && target.role >= actor.role && target.id !== actor.userId) {
        throw denied(TWO_FA_MSG.noPeer);
      }
      if (!(await store.get(id))?.enabled) throw invalid(TWO_FA_MSG.notEnabled);
      await store.remove(id);
    },
  };
}

export type TwoFactor = ReturnType<typeof twoFactor>;

/**
 * After a rotation of TOTP_KEY_SECRET (the old secret in TOTP_KEY_SECRET_PREVIOUS): seals every
 * TOTP secret sealed with an earlier secret again with the current one; a factor set up again
 * meanwhile keeps its new secret. Idempotent; returns how many were sealed again. Backup codes are
 * kept as digests and cannot be re-keyed: those made before the rotation work while the old secret
 * stays in TOTP_KEY_SECRET_PREVIOUS (docs/security.md).
 */
export async function resealTotpSecrets(store: TwoFactorStore, box: SecretBox): Promise<number> {
  let n = 0;
  for (const { userId, secret } of await store.sealedSecrets()) {
    if (!box.stale(secret)) continue;
    if (await store.replaceSecret(userId, secret, box.encrypt(box.decrypt(secret)))) n++;
  }
  return n;
}
