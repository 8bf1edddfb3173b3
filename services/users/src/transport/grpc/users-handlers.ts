import type { ServiceImpl } from '@aigw/common';
import { invalid } from '@aigw/common/errors';
import type { Actor as ActorMsg } from '@aigw/proto/common/v1/common';
import type { UserSchema, UsersService as UsersServiceDesc } from '@aigw/proto/users/v1/users';
import { ManageAction, OAuthProvider } from '@aigw/proto/users/v1/users';
import type { MessageInitShape } from '@bufbuild/protobuf';
import type { Accounts } from '../../domain/accounts.ts';
import type { Checkins } from '../../domain/checkin.ts';
import type { Credits } from '../../domain/credits.ts';
import type { EmailFlows } from '../../domain/email-flows.ts';
import type { Identities, Provider } from '../../domain/identities.ts';
import { type NotificationSettings, publicSetting } from '../../domain/notification-settings.ts';
import type { UserRecord } from '../../domain/ports.ts';
import type { TwoFactor } from '../../domain/two-factor.ts';
import { type ManageAction as Action, type Actor, normalisePage, type UserAdmin } from '../../domain/user-admin.ts';

export interface UsersUseCases {
  accounts: Accounts;
  admin: UserAdmin;
  email: EmailFlows;
  identities: Identities;
  credits: Credits;
  twoFactor: TwoFactor;
  checkins: Checkins;
  notifications: NotificationSettings;
}

/** The proto User; wallet fields stay 0 (billing owns them), secrets only when asked. */
export function toUserMessage(u: UserRecord, withSecrets = false): MessageInitShape<typeof UserSchema> {
  return {
    id: u.id,
    username: u.username,
    displayName: u.display_name,
    group: u.group,
    role: u.role,
    status: u.status,
    deletedAt: u.deleted_at,
    affCount: u.aff_count,
    affHistoryQuota: u.aff_history_quota,
    affQuota: u.aff_quota,
    inviterId: u.inviter_id,
    githubId: u.github_id,
    wechatId: u.wechat_id,
    telegramId: u.telegram_id,
    oidcId: u.oidc_id,
    linuxDoId: u.linux_do_id,
    discordId: u.discord_id,
    customOauthIds: u.custom_oauth_ids,
    email: u.email,
    accessToken: withSecrets ? u.access_token : '',
    affCode: u.aff_code,
    createdTime: u.created_at,
    lastLoginTime: u.last_login_at,
    remark: u.remark,
    // Never the webhook secret or the Gotify token: they are write-only.
    setting: publicSetting(u.setting),
  };
}

const actorOf = (a: ActorMsg | undefined): Actor => {
  if (!a || !a.userId) throw invalid('缺少操作者');
  return { userId: a.userId, role: a.role };
};

const ACTIONS: Partial<Record<ManageAction, Action>> = {
  [ManageAction.PROMOTE]: 'promote',
  [ManageAction.DEMOTE]: 'demote',
  [ManageAction.DISABLE]: 'disable',
  [ManageAction.ENABLE]: 'enable',
  [ManageAction.DELETE]: 'delete',
};

const PROVIDERS: Partial<Record<OAuthProvider, Provider>> = {
  [OAuthProvider.GITHUB]: 'github',
  [OAuthProvider.WECHAT]: 'wechat',
  [OAuthProvider.TELEGRAM]: 'telegram',
  [OAuthProvider.OIDC]: 'oidc',
  [OAuthProvider.LINUXDO]: 'linuxdo',
  [OAuthProvider.DISCORD]: 'discord',
  [OAuthProvider.CUSTOM]: 'custom',
};

const providerOf = (p: OAuthProvider): Provider => {
  const provider = PROVIDERS[p];
  if (!provider) throw invalid('未知的第三方登录方式');
  return provider;
};

const pageOut = (p: { page: number; pageSize: number }, total: number) => ({
  page: p.page,
  pageSize: p.pageSize,
  total,
});

type Handlers = ServiceImpl<typeof UsersServiceDesc>;

const userOut = (u: UserRecord) => ({ user: toUserMessage(u) });

/** The user's own account: register, login, profile, access token, invite code, groups, password check. */
function accountHandlers(uc: UsersUseCases) {
  return {
    register: async (req) =>
      userOut(
        await uc.accounts.register({
          username: req.username,
          password: req.password,
          displayName: req.displayName,
          email: req.email,
          verificationCode: req.verificationCode,
          affCode: req.affCode,
        }),
      ),
    async login(req) {
      const { user, defaultPassword } = await uc.accounts.login(req.username, req.password);
      return { user: toUserMessage(user), defaultPassword, require2fa: await uc.twoFactor.isEnabled(user.id) };
    },
    async getUserByUsername(req) {
      const user = await uc.accounts.byUsername(req.username);
      return userOut(user);
    },
    async updateSelf(req) {
      const { user } = await uc.accounts.updateSelf(req.userId, {
        username: req.username,
        displayName: req.displayName,
        password: req.password,
        originalPassword: req.originalPassword,
      });
      return userOut(user);
    },
    generateAccessToken: async (req) => ({ accessToken: await uc.accounts.generateAccessToken(req.userId) }),
    getUserByAccessToken: async (req) => userOut(await uc.accounts.byAccessToken(req.accessToken)),
    getAffCode: async (req) => ({ affCode: await uc.accounts.affCode(req.userId) }),
    transferAffQuota: async (req) => uc.credits.transferAffQuota(req.userId, req.quota),
    getUsableGroups: async (req) => ({ groups: await uc.accounts.usableGroups(req.userId) }),
    verifyPassword: async (req) => ({ ok: await uc.accounts.verifyPassword(req.userId, req.password) }),
  } satisfies Partial<Handlers>;
}

/** Admins on users: read, list, search, create, edit, manage, delete (a user deletes itself without an actor). */
function adminHandlers(uc: UsersUseCases) {
  return {
    getUser: async (req) => userOut(await uc.admin.get(req.id)),
    batchGetUsers: async (req) => ({ users: (await uc.admin.many(req.ids)).map((u) => toUserMessage(u)) }),
    async listUsers(req) {
      const page = normalisePage(req.page?.page ?? 1, req.page?.pageSize ?? 10);
      const { items, total } = await uc.admin.list(page);
      return { items: items.map((u) => toUserMessage(u)), page: pageOut(page, total) };
    },
    async searchUsers(req) {
      const page = normalisePage(req.page?.page ?? 1, req.page?.pageSize ?? 10);
      const { items, total } = await uc.admin.search(req.keyword, req.group, page);
      return { items: items.map((u) => toUserMessage(u)), page: pageOut(page, total) };
    },
    createUser: async (req) =>
      userOut(
        await uc.admin.create(actorOf(req.actor), {
          username: req.username,
          displayName: req.displayName,
          password: req.password,
          role: req.role,
          group: req.group,
        }),
      ),
    updateUser: async (req) =>
      userOut(
        await uc.admin.update(actorOf(req.actor), req.id, {
          username: req.username,
          displayName: req.displayName,
          password: req.password,
          group: req.group,
          email: req.email,
          role: req.role,
          remark: req.remark,
        }),
      ),
    async manageUser(req) {
      const action = ACTIONS[req.action];
      if (!action) throw invalid('无效的操作');
      const user = await uc.admin.manage(actorOf(req.actor), req.id, action);
      return { status: user.status, role: user.role };
    },
    async deleteUser(req) {
      if (req.actor?.userId) await uc.admin.manage(actorOf(req.actor), req.id, 'delete');
      else await uc.accounts.deleteSelf(req.id);
      return {};
    },
  } satisfies Partial<Handlers>;
}

/** Email and third-party identities: verification, binding, OAuth login, password reset. */
function identityHandlers(uc: UsersUseCases) {
  return {
    async sendEmailVerification(req) {
      await uc.email.sendVerification(req.email);
      return {};
    },
    bindEmail: async (req) => userOut(await uc.email.bindEmail(req.userId, req.email, req.code)),
    bindOAuthIdentity: async (req) =>
      userOut(await uc.identities.bind(req.userId, providerOf(req.provider), req.providerId, req.customProviderId)),
    unbindOAuthIdentity: async (req) =>
      userOut(await uc.identities.unbind(req.userId, providerOf(req.provider), req.customProviderId)),
    async loginByOAuthIdentity(req) {
      const { user, created } = await uc.identities.login({
        provider: providerOf(req.provider),
        customProviderId: req.customProviderId,
        providerId: req.providerId,
        username: req.username,
        displayName: req.displayName,
        email: req.email,
        affCode: req.affCode,
        registerIfMissing: req.registerIfMissing,
      });
      return { user: toUserMessage(user), created };
    },
    async sendPasswordResetEmail(req) {
      await uc.email.sendReset(req.email);
      return {};
    },
    async resetPassword(req) {
      const { user, password } = await uc.email.resetPassword(req.email, req.token);
      return { newPassword: password, userId: user.id };
    },
  } satisfies Partial<Handlers>;
}

/** Two-factor authentication: status, setup, enable, disable, backup codes, login check, stats, admin disable. */
function twoFactorHandlers(uc: UsersUseCases) {
  return {
    getTwoFactorStatus: (req) => uc.twoFactor.status(req.userId),
    setupTwoFactor: (req) => uc.twoFactor.setup(req.userId),
    async enableTwoFactor(req) {
      await uc.twoFactor.enable(req.userId, req.code);
      return {};
    },
    async disableTwoFactor(req) {
      await uc.twoFactor.disable(req.userId, req.code);
      return {};
    },
    regenerateBackupCodes: async (req) => ({
      backupCodes: await uc.twoFactor.regenerateBackupCodes(req.userId, req.code),
    }),
    verifyTwoFactor: async (req) => userOut(await uc.twoFactor.verifyLogin(req.userId, req.code)),
    getTwoFactorStats: () => uc.twoFactor.stats(),
    async adminDisableTwoFactor(req) {
      await uc.twoFactor.adminDisable(actorOf(req.actor), req.id);
      return {};
    },
  } satisfies Partial<Handlers>;
}

/** Check-ins and notification settings, and notifying a user. */
function settingsHandlers(uc: UsersUseCases) {
  return {
    getCheckinStatus: (req) => uc.checkins.status(req.userId, req.month),
    checkin: (req) => uc.checkins.checkin(req.userId),
    async updateUserSetting(req) {
      const s = req.setting;
      const user = await uc.notifications.update(req.id, {
        notify_type: s?.notifyType ?? '',
        quota_warning_threshold: s?.quotaWarningThreshold ?? 0,
        webhook_url: s?.webhookUrl ?? '',
        webhook_secret: s?.webhookSecret ?? '',
        notification_email: s?.notificationEmail ?? '',
        bark_url: s?.barkUrl ?? '',
        gotify_url: s?.gotifyUrl ?? '',
        gotify_token: s?.gotifyToken ?? '',
        gotify_priority: s?.gotifyPriority ?? 0,
        accept_unset_model_ratio_model: s?.acceptUnsetModelRatioModel ?? false,
        record_ip_log: s?.recordIpLog ?? false,
      });
      return userOut(user);
    },
    async notifyUser(req) {
      const n = { type: req.type, title: req.title, content: req.content, values: req.values };
      return { sent: await uc.notifications.notify(req.userId, n) };
    },
  } satisfies Partial<Handlers>;
}

/** gRPC handlers of UsersService: they translate messages and call the use cases. */
export function usersHandlers(uc: UsersUseCases): Handlers {
  return {
    ...accountHandlers(uc),
    ...adminHandlers(uc),
    ...identityHandlers(uc),
    ...twoFactorHandlers(uc),
    ...settingsHandlers(uc),
  };
}
