import { conflict, denied, invalid, notFound, precondition } from '@aigw/common/errors';
import { newAffCode } from './accounts.ts';
import type { Credits } from './credits.ts';
import type { IdentityField, OptionsReader, UserRecord, UserStore } from './ports.ts';
import { STATUS } from './ports.ts';
import { MSG, randomString } from './user-rules.ts';

export type Provider = 'github' | 'wechat' | 'telegram' | 'oidc' | 'linuxdo' | 'discord' | 'custom';
type BuiltIn = Exclude<Provider, 'custom'>;

/** The users field of each built-in provider (new-api's column names). */
const FIELD = {
  github: 'github_id',
  wechat: 'wechat_id',
  telegram: 'telegram_id',
  oidc: 'oidc_id',
  linuxdo: 'linux_do_id',
  discord: 'discord_id',
} as const satisfies Record<BuiltIn, IdentityField>;
const LABEL: Record<Provider, string> = {
  github: ' GitHub 账户',
  wechat: '微信账号',
  telegram: ' Telegram 账户',
  oidc: ' OIDC 账户',
  linuxdo: ' Linux DO 账户',
  discord: ' Discord 账户',
  custom: '第三方账户',
};

/** Where a provider's id lives on the user: a field, or the custom provider's entry. */
function fieldOf(provider: Provider, customProviderId = 0): IdentityField {
  if (provider !== 'custom') return FIELD[provider];
  if (!Number.isInteger(customProviderId) || customProviderId <= 0) throw invalid('自定义 OAuth 提供商不存在');
  return `custom_oauth_ids.${customProviderId}`;
}

export interface OAuthLoginInput {
  provider: Provider;
  /** The custom OAuth provider's id when provider is 'custom'. */
  customProviderId?: number;
  providerId: string;
  username?: string;
  displayName?: string;
  email?: string;
  affCode?: string;
  registerIfMissing: boolean;
}

/**
 * Third-party identities (GitHub, the messaging app, the chat app, OIDC, Linux DO, Discord and the
 * admins' custom OAuth providers) that the gateway has already verified with the provider: bind one
 * to an account, log in with it, or unbind it.
 */
export function identities(deps: { users: UserStore; options: OptionsReader; credits: Credits }) {
  const { users, options, credits } = deps;

  /** A username for a new account: the hint when free and short enough, else `<provider>_<6 digits>`. */
  async function pickUsername(provider: Provider, hint: string | undefined): Promise<string> {
    const clean = (hint ?? '').trim();
    if (clean && [...clean].length <= 12 && !(await users.usernameTaken(clean))) return clean;
    for (;;) {
      const name = `${provider}_${randomString(6, '0123456789')}`;
      if (!(await users.usernameTaken(name))) return name;
    }
  }

  return {
    async bind(userId: number, provider: Provider, providerId: string, customProviderId = 0): Promise<UserRecord> {
      if (!providerId) throw invalid('无效的第三方账户');
      const field = fieldOf(provider, customProviderId);
      const holder = await users.findBy(field, providerId);
      if (holder && holder.id !== userId) throw conflict(`该${LABEL[provider]}已被绑定`);
      const user =
        provider === 'custom'
          ? await users.setCustomOAuthId(userId, customProviderId, providerId)
          : await users.update(userId, { [FIELD[provider]]: providerId });
      if (!user) throw notFound(MSG.userNotFound);
      return user;
    },

    /** Forgets the user's binding to the provider; NOT_FOUND when there is none. */
    async unbind(userId: number, provider: Provider, customProviderId = 0): Promise<UserRecord> {
      fieldOf(provider, customProviderId);
      const current = await users.findById(userId);
      if (!current) throw notFound(MSG.userNotFound);
      const bound =
        provider === 'custom' ? current.custom_oauth_ids[String(customProviderId)] : current[FIELD[provider]];
      if (!bound) throw notFound('OAuth 绑定不存在');
      const user =
        provider === 'custom'
          ? await users.setCustomOAuthId(userId, customProviderId, '')
          : await users.update(userId, { [FIELD[provider]]: '' });
      if (!user) throw notFound(MSG.userNotFound);
      return user;
    },

    /** Logs in the holder of the identity; registers one when asked to and allowed. */
    async login(input: OAuthLoginInput): Promise<{ user: UserRecord; created: boolean }> {
      if (!input.providerId) throw invalid('无效的第三方账户');
      const field = fieldOf(input.provider, input.customProviderId);
      const existing = await users.findBy(field, input.providerId);
      if (existing) {
        if (existing.status !== STATUS.enabled) throw denied(MSG.userBanned);
        const user = (await users.update(existing.id, { last_login_at: Math.floor(Date.now() / 1000) })) ?? existing;
        return { user, created: false };
      }
      if (!input.registerIfMissing) throw notFound(`该${LABEL[input.provider]}未绑定`);
      if (!options.bool('RegisterEnabled')) throw precondition(MSG.registerOff);
      const username = await pickUsername(input.provider, input.username);
      const email = input.email?.trim().toLowerCase() ?? '';
      const emailFree = email !== '' && !(await users.findBy('email', email));
      const inviter = input.affCode?.trim() ? await users.findBy('aff_code', input.affCode.trim()) : undefined;
      const user = await users.create({
        username,
        display_name: (input.displayName?.trim() || username).slice(0, 20),
        password_hash: '',
        email: emailFree ? email : '',
        ...(input.provider === 'custom'
          ? { custom_oauth_ids: { [String(input.customProviderId)]: input.providerId } }
          : { [field]: input.providerId }),
        inviter_id: inviter?.id ?? 0,
        aff_code: await newAffCode(users),
        last_login_at: Math.floor(Date.now() / 1000),
        pending_credits: credits.forNewUser(inviter !== undefined),
      });
      if (inviter) await users.recordInvite(inviter.id, Math.max(0, options.number('QuotaForInviter')));
      await credits.deliverQuietly(user);
      return { user, created: true };
    },
  };
}

export type Identities = ReturnType<typeof identities>;
