import type { User } from '@aigw/proto/users/v1/users';

/** A wallet as shown with a user (billing owns it). */
export interface WalletView {
  quota: number;
  used_quota: number;
  request_count: number;
}

export const EMPTY_WALLET: WalletView = { quota: 0, used_quota: 0, request_count: 0 };

/** The /api JSON of a user (spec 01 section 3): snake_case, wallet fields from billing, no secrets. */
export function userJson(u: User, wallet: WalletView = EMPTY_WALLET) {
  return {
    id: u.id,
    username: u.username,
    display_name: u.displayName,
    role: u.role,
    status: u.status,
    email: u.email,
    github_id: u.githubId,
    wechat_id: u.wechatId,
    telegram_id: u.telegramId,
    oidc_id: u.oidcId,
    linux_do_id: u.linuxDoId,
    discord_id: u.discordId,
    group: u.group,
    quota: wallet.quota,
    used_quota: wallet.used_quota,
    request_count: wallet.request_count,
    aff_code: u.affCode,
    aff_count: u.affCount,
    aff_quota: u.affQuota,
    aff_history_quota: u.affHistoryQuota,
    inviter_id: u.inviterId,
    created_time: u.createdTime,
    last_login_time: u.lastLoginTime,
    /** new-api's user setting (JSON text; notify_type, quota_warning_threshold, ...), secrets left out. */
    setting: u.setting,
    /** Soft delete (the console shows 已注销); null while the account is live. */
    DeletedAt: u.deletedAt ? new Date(u.deletedAt * 1000).toISOString() : null,
  };
}

export type UserJson = ReturnType<typeof userJson>;

/** What a session remembers of a user. */
export const sessionUserOf = (u: User) => ({
  id: u.id,
  username: u.username,
  role: u.role,
  status: u.status,
  group: u.group,
});
