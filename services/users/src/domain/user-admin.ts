import { conflict, denied, invalid, notFound } from '@aigw/common/errors';
import { newAffCode } from './accounts.ts';
import { hashPassword } from './password.ts';
import type { Page, UserChanges, UserRecord, UserStore } from './ports.ts';
import { ROLE, STATUS } from './ports.ts';
import { checkDisplayName, checkPassword, checkUsername, MSG } from './user-rules.ts';

/** Who performs an admin action. */
export interface Actor {
  userId: number;
  role: number;
}

export type ManageAction = 'promote' | 'demote' | 'disable' | 'enable' | 'delete';

/** Caps a page request: 1-based page, size 10 by default, at most 100. */
export function normalisePage(page: number, pageSize: number): Page {
  return {
    page: Number.isFinite(page) && page >= 1 ? Math.floor(page) : 1,
    pageSize: Number.isFinite(pageSize) && pageSize >= 1 ? Math.min(100, Math.floor(pageSize)) : 10,
  };
}

/** The input of an admin's edit of a user. */
export interface AdminUserInput {
  username?: string;
  displayName?: string;
  password?: string;
  group?: string;
  email?: string;
  role?: number;
  remark?: string;
}

/** The changes of an admin's edit, checked: only the fields given; an empty password keeps the old one. */
async function adminChanges(
  users: UserStore,
  actor: Actor,
  user: UserRecord,
  input: AdminUserInput,
): Promise<UserChanges> {
  const changes: UserChanges = {};
  if (input.role !== undefined && input.role !== user.role) {
    if (input.role >= actor.role && actor.role !== ROLE.root) throw denied(MSG.noRaiseRole);
    if (![ROLE.common, ROLE.admin, ROLE.root].includes(input.role as 1)) throw invalid('无效的用户角色');
    changes.role = input.role;
  }
  if (input.username !== undefined && input.username.trim() !== user.username) {
    changes.username = checkUsername(input.username);
    if (await users.usernameTaken(changes.username)) throw conflict(MSG.usernameTaken);
  }
  if (input.displayName !== undefined) changes.display_name = checkDisplayName(input.displayName, user.username);
  if (input.password) changes.password_hash = await hashPassword(checkPassword(input.password));
  if (input.group !== undefined) changes.group = input.group.trim() || 'default';
  if (input.email !== undefined) {
    const email = input.email.trim().toLowerCase();
    const holder = email ? await users.findBy('email', email) : undefined;
    if (holder && holder.id !== user.id) throw conflict(MSG.emailTaken);
    changes.email = email;
  }
  if (input.remark !== undefined) {
    if ([...input.remark].length > 255) throw invalid('备注长度不能超过 255 个字符');
    changes.remark = input.remark.trim();
  }
  return changes;
}

/** The change an admin action makes to `user`, refused as the rules say (root is never disabled, demoted nor deleted). */
export function manageChanges(actor: Actor, user: UserRecord, action: ManageAction): UserChanges {
  const changes: UserChanges = {};
  switch (action) {
    case 'disable':
      if (user.role >= ROLE.root) throw denied(MSG.cannotDisableRoot);
      changes.status = STATUS.banned;
      break;
    case 'enable':
      changes.status = STATUS.enabled;
      break;
    case 'delete':
      if (user.role >= ROLE.root) throw denied(MSG.cannotDeleteRoot);
      changes.deleted_at = Math.floor(Date.now() / 1000);
      break;
    case 'promote':
      if (actor.role !== ROLE.root) throw denied(MSG.adminCannotPromote);
      if (user.role >= ROLE.admin) throw invalid(MSG.alreadyAdmin);
      changes.role = ROLE.admin;
      break;
    case 'demote':
      if (user.role >= ROLE.root) throw denied(MSG.cannotDemoteRoot);
      if (user.role === ROLE.common) throw invalid(MSG.alreadyCommon);
      changes.role = ROLE.common;
      break;
    default:
      throw invalid('无效的操作');
  }
  return changes;
}

/**
 * Admin use cases on users. An admin never acts on a user of equal or higher role (root may act
 * on anyone), never raises a role to its own level, and root can be neither disabled, demoted
 * nor deleted.
 */
export function userAdmin(users: UserStore) {
  const target = async (actor: Actor, id: number): Promise<UserRecord> => {
    const user = await users.findById(id);
    if (!user) throw notFound(MSG.userNotFound);
    if (actor.role <= user.role && actor.role !== ROLE.root) throw denied(MSG.noHigherRole);
    return user;
  };

  return {
    list: (page: Page) => users.list(page),
    search: (keyword: string, group: string, page: Page) => users.search(keyword.trim(), group.trim(), page),

    /** Several users by id (deleted ones too), for composing lists. */
    many: (ids: number[]) => users.findManyByIds(ids),

    async get(id: number): Promise<UserRecord> {
      const user = await users.findById(id, true);
      if (!user) throw notFound(MSG.userNotFound);
      return user;
    },

    /** POST /api/user/ (admin). */
    async create(
      actor: Actor,
      input: { username: string; displayName?: string; password: string; role?: number; group?: string },
    ): Promise<UserRecord> {
      const username = checkUsername(input.username);
      const password = checkPassword(input.password);
      const role = input.role || ROLE.common;
      if (role >= actor.role) throw denied(MSG.noCreateRole);
      if (await users.usernameTaken(username)) throw conflict(MSG.usernameTaken);
      return users.create({
        username,
        display_name: checkDisplayName(input.displayName, username),
        password_hash: await hashPassword(password),
        role,
        group: input.group?.trim() || 'default',
        aff_code: await newAffCode(users),
      });
    },

    /** PUT /api/user/ (admin): only the fields given change; an empty password keeps the old one. */
    async update(actor: Actor, id: number, input: AdminUserInput): Promise<UserRecord> {
      const user = await target(actor, id);
      const changes = await adminChanges(users, actor, user, input);
      const updated = await users.update(id, changes);
      if (!updated) throw notFound(MSG.userNotFound);
      return updated;
    },

    /** POST /api/user/manage; resolves with the user after the action. */
    async manage(actor: Actor, id: number, action: ManageAction): Promise<UserRecord> {
      const user = await target(actor, id);
      const changes = manageChanges(actor, user, action);
      const updated = await users.update(id, changes);
      if (!updated) throw notFound(MSG.userNotFound);
      return updated;
    },
  };
}

export type UserAdmin = ReturnType<typeof userAdmin>;
