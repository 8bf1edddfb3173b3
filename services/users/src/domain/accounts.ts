import { conflict, denied, invalid, notFound, precondition } from '@aigw/common/errors';
import { accessTokenDigest } from './access-token.ts';
import type { Credits } from './credits.ts';
import { hashPassword, verifyNothing, verifyPassword } from './password.ts';
import type { CodeStore, OptionsReader, UserRecord, UserStore } from './ports.ts';
import { ROLE, STATUS } from './ports.ts';
import { checkDisplayName, checkEmail, checkPassword, checkUsername, MSG, randomString } from './user-rules.ts';

export interface AccountsDeps {
  users: UserStore;
  codes: CodeStore;
  options: OptionsReader;
  credits: Credits;
}

export interface RegisterInput {
  username: string;
  password: string;
  displayName?: string;
  email?: string;
  verificationCode?: string;
  affCode?: string;
}

/** The purpose under which email verification codes are stored. */
export const EMAIL_CODE = 'email';
const DEFAULT_ROOT_PASSWORD = '123456';

/** A fresh invite code nobody holds yet. */
export async function newAffCode(users: UserStore): Promise<string> {
  for (;;) {
    const code = randomString(6);
    if (!(await users.findBy('aff_code', code))) return code;
  }
}

/** POST /api/user/register: switches, rules, email code, invite rewards. */
export async function register(
  { users, codes, options, credits }: AccountsDeps,
  input: RegisterInput,
): Promise<UserRecord> {
  if (!options.bool('RegisterEnabled')) throw precondition(MSG.registerOff);
  if (!options.bool('PasswordRegisterEnabled')) throw precondition(MSG.passwordRegisterOff);
  const username = checkUsername(input.username);
  const password = checkPassword(input.password);
  const displayName = checkDisplayName(input.displayName, username);
  let email = '';
  if (options.bool('EmailVerificationEnabled')) {
    if (!input.email?.trim() || !input.verificationCode?.trim()) throw invalid(MSG.emailCodeRequired);
    email = checkEmail(input.email, options);
    if (await users.findBy('email', email)) throw conflict(MSG.emailTaken);
  }
  if (await users.usernameTaken(username)) throw conflict(MSG.usernameTaken);
  if (email && !(await codes.consume(EMAIL_CODE, email, input.verificationCode!.trim()))) {
    throw invalid(MSG.codeInvalid);
  }
  const inviter = input.affCode?.trim() ? await users.findBy('aff_code', input.affCode.trim()) : undefined;
  const user = await users.create({
    username,
    display_name: displayName,
    password_hash: await hashPassword(password),
    email,
    inviter_id: inviter?.id ?? 0,
    aff_code: await newAffCode(users),
    pending_credits: credits.forNewUser(inviter !== undefined),
  });
  // The inviter's reward waits in aff_quota until they transfer it (one-api's behaviour).
  if (inviter) await users.recordInvite(inviter.id, Math.max(0, options.number('QuotaForInviter')));
  await credits.deliverQuietly(user);
  return user;
}

/** Self-service account use cases: register, login, profile, tokens, invite code, groups. */
export function accounts({ users, codes, options, credits }: AccountsDeps) {
  const live = async (id: number): Promise<UserRecord> => {
    const user = await users.findById(id);
    if (!user) throw notFound(MSG.userNotFound);
    return user;
  };

  return {
    live,

    /** POST /api/user/register: switches, rules, email code, invite rewards. */
    register: (input: RegisterInput) => register({ users, codes, options, credits }, input),

    /** POST /api/user/login; `defaultPassword` tells the console to warn root. */
    async login(name: string, password: string): Promise<{ user: UserRecord; defaultPassword: boolean }> {
      if (!options.bool('PasswordLoginEnabled')) throw precondition(MSG.passwordLoginOff);
      if (!name.trim() || !password) throw invalid(MSG.loginEmpty);
      const user = await users.findByLogin(name.trim());
      // The same scrypt work whether or not the user exists (no username probing by timing).
      const matches = user?.password_hash
        ? await verifyPassword(password, user.password_hash)
        : await verifyNothing(password);
      if (!user || !matches || user.status !== STATUS.enabled) throw invalid(MSG.loginFailed);
      const updated = (await users.update(user.id, { last_login_at: Math.floor(Date.now() / 1000) })) ?? user;
      return { user: updated, defaultPassword: user.role === ROLE.root && password === DEFAULT_ROOT_PASSWORD };
    },

    /** PUT /api/user/self: profile fields, or a new password (with the old one when there is one). */
    async updateSelf(
      id: number,
      input: { username?: string; displayName?: string; password?: string; originalPassword?: string },
    ): Promise<{ user: UserRecord; passwordChanged: boolean }> {
      const user = await live(id);
      const changes: Parameters<UserStore['update']>[1] = {};
      if (input.username !== undefined && input.username.trim() !== user.username) {
        changes.username = checkUsername(input.username);
        if (await users.usernameTaken(changes.username)) throw conflict(MSG.usernameTaken);
      }
      if (input.displayName !== undefined) changes.display_name = checkDisplayName(input.displayName, user.username);
      if (input.password) {
        checkPassword(input.password);
        if (user.password_hash && !(await verifyPassword(input.originalPassword ?? '', user.password_hash))) {
          throw invalid(MSG.originalPasswordWrong);
        }
        changes.password_hash = await hashPassword(input.password);
      }
      const updated = await users.update(id, changes);
      if (!updated) throw notFound(MSG.userNotFound);
      return { user: updated, passwordChanged: changes.password_hash !== undefined };
    },

    /** DELETE /api/user/self: a soft delete; root cannot leave. */
    async deleteSelf(id: number): Promise<void> {
      const user = await live(id);
      if (user.role >= ROLE.root) throw denied(MSG.rootSelfDelete);
      await users.update(id, { deleted_at: Math.floor(Date.now() / 1000) });
    },

    /**
     * GET /api/user/token: a new system access token replaces the old one. Shown once (the
     * console copies it); only its digest is stored.
     */
    async generateAccessToken(id: number): Promise<string> {
      await live(id);
      let token: string;
      do token = randomString(32);
      while (await users.findBy('access_token', accessTokenDigest(token)));
      await users.update(id, { access_token: accessTokenDigest(token) });
      return token;
    },

    async byUsername(username: string): Promise<UserRecord> {
      const user = username ? await users.findBy('username', username) : undefined;
      if (!user) throw notFound(MSG.userNotFound);
      return user;
    },

    /** By the digest only: rows from before hashing are converted at start (indexAccessTokens). */
    async byAccessToken(token: string): Promise<UserRecord> {
      const user = token ? await users.findBy('access_token', accessTokenDigest(token)) : undefined;
      if (!user) throw notFound('无效的 access token');
      return user;
    },

    /** GET /api/user/aff: the invite code, created on first use. */
    async affCode(id: number): Promise<string> {
      const user = await live(id);
      if (user.aff_code) return user.aff_code;
      const code = await newAffCode(users);
      await users.update(id, { aff_code: code });
      return code;
    },

    /** GET /api/user/self/groups: UserUsableGroups plus the user's own group. */
    async usableGroups(id: number): Promise<Record<string, string>> {
      const user = await live(id);
      const groups = { ...options.json<Record<string, string>>('UserUsableGroups') };
      if (user.group && !(user.group in groups)) groups[user.group] = '用户分组';
      return groups;
    },

    async verifyPassword(id: number, password: string): Promise<boolean> {
      const user = await live(id);
      return Boolean(user.password_hash) && verifyPassword(password, user.password_hash);
    },
  };
}

export type Accounts = ReturnType<typeof accounts>;
