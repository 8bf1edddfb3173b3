import { ok } from '@aigw/common';
import { denied, invalid, notFound } from '@aigw/common/errors';
import type { User } from '@aigw/proto/users/v1/users';
import { ManageAction } from '@aigw/proto/users/v1/users';
import type { Request, RequestHandler, Router } from 'express';
import { z } from 'zod';
import { userGroupsView } from '../../../domain/user-groups.ts';
import { sessionUserOf, userJson } from '../../../domain/user-view.ts';
import { modelsGateway } from '../../grpc/models-gateway.ts';
import { walletGateway } from '../../grpc/wallet-gateway.ts';
import type { RouteDeps } from '../deps.ts';
import { originOf } from '../middleware/session.ts';
import { body, id, int, optional, optText, pageOf as pageOfQuery, pageShape, pathId, quota } from '../schemas.ts';
import { input, validate } from '../validate.ts';
import { passwordChangeProof } from './secure-verification.ts';

const role = int(0, 100, '无效的角色');
const SelfUpdate = validate({
  body: body({ username: optText, display_name: optText, password: optText, original_password: optText }),
});
const AffTransfer = validate({ body: body({ quota: quota() }) });
const List = validate({ query: z.object(pageShape) });
const Search = validate({ query: z.object({ keyword: optText, group: optText, ...pageShape }) });
const Create = validate({
  body: body({ username: optText, display_name: optText, password: optText, role: optional(role), group: optText }),
});
const Update = validate({
  body: body({
    id: id('无效的用户 id'),
    quota: optional(quota()),
    username: optText,
    display_name: optText,
    password: optText,
    group: optText,
    email: optText,
    role: optional(role),
    remark: optText,
  }),
});
const Manage = validate({ body: body({ id: id('无效的用户 id'), action: optText }) });
const ById = validate({ params: pathId });

const ACTIONS: Record<string, ManageAction> = {
  promote: ManageAction.PROMOTE,
  demote: ManageAction.DEMOTE,
  disable: ManageAction.DISABLE,
  enable: ManageAction.ENABLE,
  delete: ManageAction.DELETE,
};

/** The caller after a guard (the guard guarantees it). */
const me = (req: Request) => req.user!;
const actorOf = (req: Request) => ({ userId: me(req).id, role: me(req).role, username: me(req).username });

/** Lets non-numeric /user/<word> paths fall through to routes registered later (e.g. by other modules). */
const numericId: RequestHandler = (req, _res, next) => (/^\d+$/.test(String(req.params.id)) ? next() : next('route'));

/** Users in answers: with their wallets; the sessions of a changed user brought up to date. */
function userAnswers(deps: RouteDeps) {
  const { clients, sessions } = deps;
  const wallets = walletGateway(clients.wallet, deps.logger);
  const withWallet = async (u: User) => userJson(u, await wallets.get(u.id));
  /** Admin answers add the admin's note (new-api's remark), which the user's own answers leave out. */
  const withWallets = async (items: User[]) => {
    const map = await wallets.getMany(items.map((u) => u.id));
    return items.map((u) => ({ ...userJson(u, map.get(u.id)), remark: u.remark }));
  };
  /** Brings the sessions of a changed user up to date: ended when the user may no longer log in. */
  const syncSessions = async (u: User | undefined, ended: boolean) => {
    if (!u) return;
    if (ended || u.status !== 1 || u.deletedAt) await sessions.destroyAllOf(u.id);
    else await sessions.refresh(sessionUserOf(u));
  };
  return { wallets, withWallet, withWallets, syncSessions };
}

type UserAnswers = ReturnType<typeof userAnswers>;

/** The caller's own account (any logged-in user). */
function selfRoutes(api: Router, deps: RouteDeps, { withWallet, syncSessions }: UserAnswers): void {
  const { clients, sessions, guard, config } = deps;
  const models = modelsGateway(clients.channels, deps.logger);
  /** Cookies are Secure when forced by COOKIE_SECURE or when this request came over HTTPS. */
  const secure = (req: Request) => config.COOKIE_SECURE === 'true' || req.secure;

  api.get('/user/self', guard.user, async (req, res) => {
    const { user } = await clients.users.getUser({ id: me(req).id });
    if (!user) throw notFound('用户不存在');
    ok(res, await withWallet(user));
  });

  api.put('/user/self', guard.user, SelfUpdate, passwordChangeProof(deps), async (req, res) => {
    const b = input(req, SelfUpdate).body;
    const password = b.password || undefined;
    const { user } = await clients.users.updateSelf({
      userId: me(req).id,
      username: b.username,
      displayName: b.display_name,
      password,
      originalPassword: b.original_password,
    });
    if (user && password) {
      // A new password ends every other session; this browser stays logged in.
      await sessions.destroyAllOf(user.id);
      await sessions.create(res, sessionUserOf(user), secure(req), originOf(req, 'password'));
    } else await syncSessions(user, false);
    ok(res, undefined, '用户信息更新成功！');
  });

  api.delete('/user/self', guard.user, async (req, res) => {
    await clients.users.deleteUser({ id: me(req).id });
    await sessions.destroyAllOf(me(req).id);
    await sessions.destroy(req, res);
    ok(res, undefined, '账户已注销');
  });

  api.get('/user/token', guard.user, async (req, res) => {
    const { accessToken } = await clients.users.generateAccessToken({ userId: me(req).id });
    ok(res, accessToken);
  });

  api.get('/user/aff', guard.user, async (req, res) => {
    ok(res, (await clients.users.getAffCode({ userId: me(req).id })).affCode);
  });

  api.post('/user/aff_transfer', guard.user, AffTransfer, async (req, res) => {
    const { quota } = input(req, AffTransfer).body;
    const r = await clients.users.transferAffQuota({ userId: me(req).id, quota });
    ok(res, { aff_quota: r.affQuota, quota: r.quota }, '划转成功');
  });

  api.get('/user/models', guard.user, async (req, res) => {
    ok(res, await models.forGroup(me(req).group || 'default'));
  });

  // new-api's answer: {group: {ratio, desc}}, the ratio this user pays there (auto: 自动).
  api.get('/user/self/groups', guard.user, async (req, res) => {
    const { user } = await clients.users.getUser({ id: me(req).id });
    ok(res, userGroupsView({ group: user?.group || 'default', role: user?.role ?? 0 }, deps.options));
  });
}

/** A page of users in the admins' shape. */
const userPage = async (
  withWallets: UserAnswers['withWallets'],
  r: { items: User[]; page?: { total: number; page: number; pageSize: number } | undefined },
) => ({
  items: await withWallets(r.items),
  total: r.page?.total ?? 0,
  page: r.page?.page ?? 1,
  page_size: r.page?.pageSize ?? 10,
});

/** Admins: the user list and search. */
function userListRoutes(api: Router, { clients, guard }: RouteDeps, { withWallets }: UserAnswers): void {
  api.get('/user/', guard.admin, List, async (req, res) => {
    const r = await clients.users.listUsers({ page: pageOfQuery(input(req, List).query) });
    ok(res, await userPage(withWallets, r));
  });

  api.get('/user/search', guard.admin, Search, async (req, res) => {
    const q = input(req, Search).query;
    const r = await clients.users.searchUsers({ keyword: q.keyword ?? '', group: q.group ?? '', page: pageOfQuery(q) });
    ok(res, await userPage(withWallets, r));
  });
}

/** Admins: create, edit and manage (promote, demote, disable, enable, delete) users. */
function userAdminRoutes(api: Router, { clients, guard }: RouteDeps, { wallets, syncSessions }: UserAnswers): void {
  api.post('/user/', guard.admin, Create, async (req, res) => {
    const b = input(req, Create).body;
    if (!b.username?.trim() || !b.password) throw invalid('用户名和密码不能为空');
    await clients.users.createUser({
      actor: actorOf(req),
      username: b.username,
      displayName: b.display_name ?? '',
      password: b.password,
      role: b.role ?? 1,
      group: b.group ?? '',
    });
    ok(res, undefined, '用户账户创建成功！');
  });

  api.put('/user/', guard.admin, Update, async (req, res) => {
    const b = input(req, Update).body;
    const { id, quota } = b;
    const password = b.password || undefined;
    const { user } = await clients.users.updateUser({
      actor: actorOf(req),
      id,
      username: b.username,
      displayName: b.display_name,
      password,
      group: b.group,
      email: b.email,
      role: b.role,
      remark: b.remark,
    });
    if (!user) throw notFound('用户不存在');
    if (quota !== undefined && quota !== (await wallets.get(id)).quota) {
      await wallets.setQuota({ ...me(req) }, user, quota);
    }
    await syncSessions(user, password !== undefined);
    ok(res, undefined, '用户信息更新成功！');
  });

  api.post('/user/manage', guard.admin, Manage, async (req, res) => {
    const b = input(req, Manage).body;
    const action = Object.hasOwn(ACTIONS, b.action ?? '') ? ACTIONS[b.action ?? ''] : undefined;
    if (!action) throw invalid('无效的操作');
    const { id } = b;
    const result = await clients.users.manageUser({ actor: actorOf(req), id, action });
    const { user } = await clients.users.getUser({ id });
    await syncSessions(user, action === ManageAction.DISABLE || action === ManageAction.DELETE);
    ok(res, { status: result.status, role: result.role }, '操作成功完成！');
  });
}

/** Admins: one user read or deleted by id. */
function userByIdRoutes(api: Router, { clients, sessions, guard }: RouteDeps, { withWallet }: UserAnswers): void {
  api.get('/user/:id', numericId, guard.admin, ById, async (req, res) => {
    const { user } = await clients.users.getUser({ id: input(req, ById).params.id });
    if (!user) throw notFound('用户不存在');
    if (user.role >= me(req).role && user.id !== me(req).id && me(req).role < 100) {
      throw denied('无权获取同级或更高等级用户的信息');
    }
    ok(res, { ...(await withWallet(user)), remark: user.remark });
  });

  api.delete('/user/:id', numericId, guard.admin, ById, async (req, res) => {
    const { id } = input(req, ById).params;
    await clients.users.deleteUser({ actor: actorOf(req), id });
    await sessions.destroyAllOf(id);
    ok(res, undefined, '操作成功完成！');
  });
}

/** The caller's own account (any logged-in user) and user administration (admins). */
export function userRoutes(api: Router, deps: RouteDeps): void {
  const answers = userAnswers(deps);
  selfRoutes(api, deps, answers);
  userListRoutes(api, deps, answers);
  userAdminRoutes(api, deps, answers);
  userByIdRoutes(api, deps, answers);
}
