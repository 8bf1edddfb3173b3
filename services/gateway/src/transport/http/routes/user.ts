import { ok } from '@aigw/common';
import { denied, invalid, notFound } from '@aigw/common/errors';
import type { User } from '@aigw/proto/users/v1/users';
import { ManageAction } from '@aigw/proto/users/v1/users';
import type { Request, RequestHandler, Router } from 'express';
import { sessionUserOf, userJson } from '../../../domain/user-view.ts';
import { modelsGateway } from '../../grpc/models-gateway.ts';
import { walletGateway } from '../../grpc/wallet-gateway.ts';
import type { RouteDeps } from '../deps.ts';
import { bodyOf, optionalText, text, wholeNumber } from '../input.ts';

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

/** The caller's own account (any logged-in user) and user administration (admins). */
export function userRoutes(api: Router, deps: RouteDeps): void {
  const { clients, sessions, guard, config } = deps;
  const wallets = walletGateway(clients.wallet, deps.logger);
  const models = modelsGateway(clients.channels, deps.logger);
  const secure = config.COOKIE_SECURE === 'true';

  const withWallet = async (u: User) => userJson(u, await wallets.get(u.id));
  const withWallets = async (items: User[]) => {
    const map = await wallets.getMany(items.map((u) => u.id));
    return items.map((u) => userJson(u, map.get(u.id)));
  };
  const pageOf = (req: Request) => ({
    page: Math.max(1, wholeNumber(req.query.p, 1)),
    pageSize: Math.min(100, Math.max(1, wholeNumber(req.query.page_size, 10))),
  });
  /** Brings the sessions of a changed user up to date: ended when the user may no longer log in. */
  const syncSessions = async (u: User | undefined, ended: boolean) => {
    if (!u) return;
    if (ended || u.status !== 1 || u.deletedAt) await sessions.destroyAllOf(u.id);
    else await sessions.refresh(sessionUserOf(u));
  };

  // --- self -------------------------------------------------------------------------------------
  api.get('/user/self', guard.user, async (req, res) => {
    const { user } = await clients.users.getUser({ id: me(req).id });
    if (!user) throw notFound('用户不存在');
    ok(res, await withWallet(user));
  });

  api.put('/user/self', guard.user, async (req, res) => {
    const b = bodyOf(req);
    const password = optionalText(b.password) || undefined;
    const { user } = await clients.users.updateSelf({
      userId: me(req).id,
      username: optionalText(b.username),
      displayName: optionalText(b.display_name),
      password,
      originalPassword: optionalText(b.original_password),
    });
    if (user && password) {
      // A new password ends every other session; this browser stays logged in.
      await sessions.destroyAllOf(user.id);
      await sessions.create(res, sessionUserOf(user), secure);
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

  api.post('/user/aff_transfer', guard.user, async (req, res) => {
    const quota = Number(bodyOf(req).quota);
    if (!Number.isFinite(quota)) throw invalid('无效的参数');
    const r = await clients.users.transferAffQuota({ userId: me(req).id, quota });
    ok(res, { aff_quota: r.affQuota, quota: r.quota }, '划转成功');
  });

  api.get('/user/models', guard.user, async (req, res) => {
    ok(res, await models.forGroup(me(req).group || 'default'));
  });

  api.get('/user/self/groups', guard.user, async (req, res) => {
    ok(res, (await clients.users.getUsableGroups({ userId: me(req).id })).groups);
  });

  // --- admin ------------------------------------------------------------------------------------
  api.get('/user/', guard.admin, async (req, res) => {
    const { items, page } = await clients.users.listUsers({ page: pageOf(req) });
    ok(res, {
      items: await withWallets(items),
      total: page?.total ?? 0,
      page: page?.page ?? 1,
      page_size: page?.pageSize ?? 10,
    });
  });

  api.get('/user/search', guard.admin, async (req, res) => {
    const { items, page } = await clients.users.searchUsers({
      keyword: text(req.query.keyword),
      group: text(req.query.group),
      page: pageOf(req),
    });
    ok(res, {
      items: await withWallets(items),
      total: page?.total ?? 0,
      page: page?.page ?? 1,
      page_size: page?.pageSize ?? 10,
    });
  });

  api.post('/user/', guard.admin, async (req, res) => {
    const b = bodyOf(req);
    if (!text(b.username).trim() || !text(b.password)) throw invalid('用户名和密码不能为空');
    await clients.users.createUser({
      actor: actorOf(req),
      username: text(b.username),
      displayName: text(b.display_name),
      password: text(b.password),
      role: wholeNumber(b.role, 1),
      group: text(b.group),
    });
    ok(res, undefined, '用户账户创建成功！');
  });

  api.put('/user/', guard.admin, async (req, res) => {
    const b = bodyOf(req);
    const id = wholeNumber(b.id, 0);
    if (id <= 0) throw invalid('无效的用户 id');
    const quota =
      b.quota === undefined || b.quota === null || b.quota === ''
        ? undefined
        : wholeNumber(b.quota, 0, '额度必须是整数');
    const password = optionalText(b.password) || undefined;
    const { user } = await clients.users.updateUser({
      actor: actorOf(req),
      id,
      username: optionalText(b.username),
      displayName: optionalText(b.display_name),
      password,
      group: optionalText(b.group),
      email: optionalText(b.email),
      role: b.role === undefined ? undefined : wholeNumber(b.role, 1),
    });
    if (!user) throw notFound('用户不存在');
    if (quota !== undefined && quota !== (await wallets.get(id)).quota) {
      await wallets.setQuota({ ...me(req) }, user, quota);
    }
    await syncSessions(user, password !== undefined);
    ok(res, undefined, '用户信息更新成功！');
  });

  api.post('/user/manage', guard.admin, async (req, res) => {
    const b = bodyOf(req);
    const action = ACTIONS[text(b.action)];
    if (!action) throw invalid('无效的操作');
    const id = wholeNumber(b.id, 0);
    const result = await clients.users.manageUser({ actor: actorOf(req), id, action });
    const { user } = await clients.users.getUser({ id });
    await syncSessions(user, action === ManageAction.DISABLE || action === ManageAction.DELETE);
    ok(res, { status: result.status, role: result.role }, '操作成功完成！');
  });

  api.get('/user/:id', numericId, guard.admin, async (req, res) => {
    const { user } = await clients.users.getUser({ id: Number(req.params.id) });
    if (!user) throw notFound('用户不存在');
    if (user.role >= me(req).role && user.id !== me(req).id && me(req).role < 100) {
      throw denied('无权获取同级或更高等级用户的信息');
    }
    ok(res, await withWallet(user));
  });

  api.delete('/user/:id', numericId, guard.admin, async (req, res) => {
    const id = Number(req.params.id);
    await clients.users.deleteUser({ actor: actorOf(req), id });
    await sessions.destroyAllOf(id);
    ok(res, undefined, '操作成功完成！');
  });
}
