import type { Stack } from '@aigw/local-stack/stack';
import { Api, rootApi, startMoneyStack, userApi } from '@aigw/testkit/harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Issue 10, "route x role matrix": every /api route of the gateway's route table (read from the
 * running gateway's /api/openapi.json, which is built from the mounted routes) x anonymous, user,
 * admin and root, against the guard the spec and the reference behaviour give (below, written by
 * hand from them, not from the code): anonymous callers of a guarded route get 401, a role below
 * the guard 403, a role at or above it never 401/403. A route missing from the expectations fails
 * the test, so a new route must be classified. Then: admins cannot act on root or on peer admins.
 */
const PUBLIC = 0;
const USER = 1;
const ADMIN = 10;
const ROOT = 100;

/** Spec 01/02 and reference-behaviour.md: who may call what. */
const EXPECTED: Record<string, number> = {
  'GET /status': PUBLIC,
  'GET /notice': PUBLIC,
  'GET /about': PUBLIC,
  'GET /home_page_content': PUBLIC,
  'GET /pricing': PUBLIC,
  'POST /user/register': PUBLIC,
  'POST /user/login': PUBLIC,
  'POST /user/login/2fa': PUBLIC,
  'GET /user/logout': PUBLIC,
  'GET /verification': PUBLIC,
  'GET /reset_password': PUBLIC,
  'POST /user/reset': PUBLIC,
  'GET /oauth/state': PUBLIC,
  'GET /oauth/github': PUBLIC,
  'GET /oauth/wechat': PUBLIC,
  'GET /oauth/telegram/login': PUBLIC,
  // Single sign-on (issue 26.4): starting a login and its callback are public; bindings are the user's own.
  'GET /oauth/:provider/authorize': PUBLIC,
  'GET /oauth/:provider': PUBLIC,
  'GET /user/self/oauth/bindings': USER,
  'DELETE /user/self/oauth/bindings/:provider_id': USER,
  'GET /user/:id/oauth/bindings': ADMIN,
  'DELETE /user/:id/oauth/bindings/:provider_id': ADMIN,
  'GET /custom-oauth-provider/': ROOT,
  'GET /custom-oauth-provider/:id': ROOT,
  'POST /custom-oauth-provider/': ROOT,
  'POST /custom-oauth-provider/discovery': ROOT,
  'PUT /custom-oauth-provider/:id': ROOT,
  'DELETE /custom-oauth-provider/:id': ROOT,
  // The payment gateway's callback: authenticated by its signature, not by a session.
  'GET /user/epay/notify': PUBLIC,
  'POST /user/epay/notify': PUBLIC,
  'GET /user/self': USER,
  'PUT /user/self': USER,
  'DELETE /user/self': USER,
  'PUT /user/setting': USER,
  'GET /user/token': USER,
  'GET /user/aff': USER,
  'POST /user/aff_transfer': USER,
  'GET /user/models': USER,
  'GET /user/self/groups': USER,
  'GET /user/2fa/status': USER,
  'POST /user/2fa/setup': USER,
  'POST /user/2fa/enable': USER,
  'POST /user/2fa/disable': USER,
  'POST /user/2fa/backup_codes': USER,
  'GET /user/2fa/stats': ADMIN,
  'DELETE /user/:id/2fa': ADMIN,
  'POST /user/passkey/login/begin': PUBLIC,
  'POST /user/passkey/login/finish': PUBLIC,
  'GET /user/passkey': USER,
  'POST /user/passkey/register/begin': USER,
  'POST /user/passkey/register/finish': USER,
  'POST /user/passkey/verify/begin': USER,
  'POST /user/passkey/verify/finish': USER,
  'DELETE /user/passkey': USER,
  'DELETE /user/:id/reset_passkey': ADMIN,
  'POST /verify': USER,
  'POST /token/:id/key': USER,
  'GET /user/self/sessions': USER,
  'POST /user/self/sessions/revoke-others': USER,
  'DELETE /user/self/sessions/:sid': USER,
  'GET /user/checkin': USER,
  'GET /console/panels': USER,
  'GET /uptime/status': USER,
  'POST /user/checkin': USER,
  'GET /oauth/wechat/bind': USER,
  'GET /oauth/telegram/bind': USER,
  'GET /oauth/email/bind': USER,
  'GET /token/': USER,
  'GET /token/search': USER,
  'GET /token/:id': USER,
  'POST /token/': USER,
  'PUT /token/': USER,
  'DELETE /token/:id': USER,
  'POST /user/topup': USER,
  'POST /user/amount': USER,
  'POST /user/pay': USER,
  // Card payments: the providers' webhooks are authenticated by their signatures.
  'POST /stripe/webhook': PUBLIC,
  'POST /creem/webhook': PUBLIC,
  'GET /user/topup/info': USER,
  'POST /user/stripe/pay': USER,
  'POST /user/stripe/amount': USER,
  'POST /user/creem/pay': USER,
  'GET /user/topup/self': USER,
  'GET /user/topup': ADMIN,
  'GET /subscription/plans': USER,
  'GET /subscription/self': USER,
  'PUT /subscription/self/preference': USER,
  'POST /subscription/balance/pay': USER,
  'POST /subscription/epay/pay': USER,
  'POST /subscription/stripe/pay': USER,
  'POST /subscription/creem/pay': USER,
  // Epay's callback for subscription orders: authenticated by its signature, not by a session.
  'GET /subscription/epay/notify': PUBLIC,
  'POST /subscription/epay/notify': PUBLIC,
  'GET /subscription/admin/plans': ADMIN,
  'POST /subscription/admin/plans': ADMIN,
  'PUT /subscription/admin/plans/:id': ADMIN,
  'PATCH /subscription/admin/plans/:id': ADMIN,
  'POST /subscription/admin/bind': ADMIN,
  'GET /subscription/admin/users/:id/subscriptions': ADMIN,
  'POST /subscription/admin/users/:id/subscriptions': ADMIN,
  'POST /subscription/admin/user_subscriptions/:id/invalidate': ADMIN,
  'POST /user/topup/complete': ADMIN,
  'GET /log/self': USER,
  'GET /log/self/export': USER,
  'GET /log/export': ADMIN,
  // new-api's read-only lookups by an API key (no session): see BY_KEY.
  'GET /log/token': PUBLIC,
  'GET /usage/token': PUBLIC,
  // Spec 02 section 7: drawing and async tasks, all of them for admins, one's own for users.
  'GET /mj/': ADMIN,
  'GET /mj/self': USER,
  'GET /task/': ADMIN,
  'GET /task/self': USER,
  'GET /log/self/stat': USER,
  'GET /data/self': USER,
  'GET /user/': ADMIN,
  'GET /user/search': ADMIN,
  'POST /user/': ADMIN,
  'PUT /user/': ADMIN,
  'POST /user/manage': ADMIN,
  'GET /user/:id': ADMIN,
  'DELETE /user/:id': ADMIN,
  'GET /group/': ADMIN,
  'GET /models': ADMIN,
  'GET /models/missing': ADMIN,
  // The model catalogue (new-api's vendor and model meta, the sync from upstream metadata): admins.
  'GET /models/': ADMIN,
  'GET /models/search': ADMIN,
  'GET /models/:id': ADMIN,
  'POST /models/': ADMIN,
  'PUT /models/': ADMIN,
  'DELETE /models/:id': ADMIN,
  'GET /models/sync_upstream/preview': ADMIN,
  'POST /models/sync_upstream': ADMIN,
  'GET /vendors/': ADMIN,
  'GET /vendors/search': ADMIN,
  'GET /vendors/:id': ADMIN,
  'POST /vendors/': ADMIN,
  'PUT /vendors/': ADMIN,
  'DELETE /vendors/:id': ADMIN,
  'GET /channel/models': ADMIN,
  'GET /channel/': ADMIN,
  'GET /channel/search': ADMIN,
  'GET /channel/types': ADMIN,
  'GET /channel/test': ADMIN,
  'GET /channel/test/:id': ADMIN,
  'GET /channel/update_balance': ADMIN,
  'GET /channel/update_balance/:id': ADMIN,
  'GET /channel/fetch_models/:id': ADMIN,
  'POST /channel/fetch_models': ADMIN,
  'GET /channel/:id': ADMIN,
  'POST /channel/': ADMIN,
  'PUT /channel/': ADMIN,
  'DELETE /channel/disabled': ADMIN,
  'DELETE /channel/:id': ADMIN,
  'POST /channel/batch': ADMIN,
  'POST /channel/fix': ADMIN,
  'POST /channel/multi_key/manage': ADMIN,
  'GET /redemption/': ADMIN,
  'GET /redemption/search': ADMIN,
  'GET /redemption/:id': ADMIN,
  'POST /redemption/': ADMIN,
  'PUT /redemption/': ADMIN,
  'DELETE /redemption/invalid': ADMIN,
  'DELETE /redemption/:id': ADMIN,
  'GET /log/': ADMIN,
  'GET /log/stat': ADMIN,
  'GET /data/': ADMIN,
  'GET /option/': ROOT,
  'PUT /option/': ROOT,
  'POST /option/rest_model_ratio': ROOT,
  'DELETE /log/': ROOT,
};

/** Calls that end the caller's session or account: made with throwaway sessions, after the rest. */
const SESSION_ENDING = new Set(['GET /user/logout', 'DELETE /user/self']);
/** Past the guard they want a fresh re-verification: 403 with new-api's SECURITY_PROOF_REQUIRED. */
const PROOF_NEEDED = new Set(['POST /token/:id/key']);
/** Authenticated by the API key in Authorization, whatever the session: 401 without one (logs-routes.test.ts). */
const BY_KEY = new Set(['GET /log/token', 'GET /usage/token']);

interface Operation {
  method: string;
  path: string;
  minRole: number;
}

describe('route x role matrix', () => {
  let stack: Stack;
  let operations: Operation[];
  const callers: Record<string, { api: Api; role: number }> = {};

  beforeAll(async () => {
    stack = await startMoneyStack(['logs']);
    callers.anonymous = { api: new Api(stack.gatewayUrl), role: 0 };
    callers.user = { api: (await userApi(stack)).api, role: USER };
    callers.admin = { api: (await userApi(stack, { role: ADMIN })).api, role: ADMIN };
    callers.root = { api: await rootApi(stack), role: ROOT };
    const doc = (await (await fetch(`${stack.gatewayUrl}/api/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { 'x-min-role': number }>>;
    };
    operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({
        method: method.toUpperCase(),
        path: path.replace(/^\/api/, '').replace(/\{(\w+)\}/g, ':$1'),
        minRole: op['x-min-role'],
      })),
    );
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const call = (api: Api, op: Operation) =>
    api.call(
      op.method,
      op.path.replace(/:\w+/g, '999999'),
      op.method === 'GET' || op.method === 'DELETE' ? undefined : {},
    );

  /** What a role must get from a route: 401 / 403 when below the guard, anything else otherwise. */
  const verdict = (status: number, role: number, need: number): string | undefined => {
    if (role < need) {
      const want = role === 0 ? 401 : 403;
      return status === want ? undefined : `expected ${want}, got ${status}`;
    }
    return status === 401 || status === 403 ? `refused with ${status}` : undefined;
  };

  it('when the route table is read, then every route is classified and its guard is the spec one', () => {
    expect(operations.length).toBeGreaterThan(70);
    const wrong = operations
      .map((op) => {
        const key = `${op.method} ${op.path}`;
        if (!(key in EXPECTED)) return `${key}: not classified`;
        return EXPECTED[key] === op.minRole ? undefined : `${key}: guard ${op.minRole}, spec ${EXPECTED[key]}`;
      })
      .filter(Boolean);
    expect(wrong).toEqual([]);
  });

  it('when every route is called by anonymous, user, admin and root, then each answer matches the spec guard', async () => {
    const failures: string[] = [];
    for (const op of operations) {
      const key = `${op.method} ${op.path}`;
      if (SESSION_ENDING.has(key) || BY_KEY.has(key)) continue;
      const need = EXPECTED[key] ?? ROOT;
      for (const [name, c] of Object.entries(callers)) {
        const res = await call(c.api, op);
        const proofAsked = (res.body as { code?: string }).code === 'SECURITY_PROOF_REQUIRED';
        if (PROOF_NEEDED.has(key) && c.role >= need && res.status === 403 && proofAsked) continue;
        const bad = verdict(res.status, c.role, need);
        if (bad) failures.push(`${name} ${key}: ${bad} (${res.body.message})`);
      }
    }
    expect(failures).toEqual([]);
    // The sessions are still alive (nothing above logged anyone out).
    for (const name of ['user', 'admin', 'root']) expect((await callers[name]!.api.get('/user/self')).status).toBe(200);
  });

  it('when logout and account deletion are called, then only the guard decides who may', async () => {
    expect((await new Api(stack.gatewayUrl).call('DELETE', '/user/self')).status).toBe(401);
    expect((await new Api(stack.gatewayUrl).get('/user/logout')).status).toBe(200);
    for (const role of [USER, ADMIN]) {
      const { api } = await userApi(stack, { role });
      expect((await api.call('DELETE', '/user/self')).body.success).toBe(true);
      const other = (await userApi(stack, { role })).api;
      expect((await other.get('/user/logout')).body.success).toBe(true);
      expect((await other.get('/user/self')).status).toBe(401);
    }
    // Root may not delete itself: a business refusal, after the guard let it through.
    expect((await callers.root!.api.call('DELETE', '/user/self')).status).toBe(403);
  });

  it('when an admin acts on root or on a peer admin, then every action is refused and nothing changes', async () => {
    const admin = callers.admin!.api;
    const peer = await userApi(stack, { role: ADMIN });
    const targets = [
      { id: 1, name: 'root', role: ROOT },
      { id: peer.id, name: 'peer admin', role: ADMIN },
    ];
    const refused = (res: { status: number; body: { success: boolean } }) => res.status === 403 || !res.body.success;
    for (const t of targets) {
      expect((await admin.get(`/user/${t.id}`)).status, t.name).toBe(403);
      const edits = [
        { quota: 1 },
        { password: 'hijacked-123' },
        { role: 1 },
        { group: 'vip' },
        { display_name: 'owned' },
      ];
      for (const e of edits)
        expect(refused(await admin.put('/user/', { id: t.id, ...e })), `${t.name} ${JSON.stringify(e)}`).toBe(true);
      for (const action of ['promote', 'demote', 'disable', 'delete', 'enable']) {
        expect(refused(await admin.post('/user/manage', { id: t.id, action })), `${t.name} ${action}`).toBe(true);
      }
      expect(refused(await admin.call('DELETE', `/user/${t.id}`)), `${t.name} delete`).toBe(true);
      expect((await admin.get(`/user/${t.id}/oauth/bindings`)).status, `${t.name} bindings`).toBe(403);
      expect(refused(await admin.call('DELETE', `/user/${t.id}/oauth/bindings/1`)), `${t.name} unbind`).toBe(true);
    }
    // Nothing changed: both still log in with their passwords and keep their roles.
    const again = new Api(stack.gatewayUrl);
    await again.login(peer.username, 'password123');
    const self = await again.get<{ role: number; status: number; display_name: string }>('/user/self');
    expect(self.body.data).toMatchObject({ role: ADMIN, status: 1 });
    expect(self.body.data?.display_name).not.toBe('owned');
    const root = await rootApi(stack);
    expect((await root.get<{ role: number; status: number }>('/user/self')).body.data).toMatchObject({
      role: ROOT,
      status: 1,
    });
    // And an admin cannot make a user of its own rank or above.
    const made = await admin.post('/user/', {
      username: `m${Date.now().toString(36).slice(-6)}`,
      password: 'password123',
      role: ROOT,
    });
    expect(made.body.success).toBe(false);
  });
});
