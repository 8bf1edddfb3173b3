/**
 * Internal call authentication on every service (issue 10 item 2, ADR 0006): the whole stack on
 * real servers, called over real gRPC as an outsider (no or foreign credentials) and as a platform
 * service trying to act as root.
 */
import {
  AppError,
  type CallSigner,
  createClient,
  createInternalAuth,
  generateKeySet,
  keysOf,
  type ServiceClient,
} from '@aigw/common';
import { type Stack, stackKeys, startStack } from '@aigw/local-stack/stack';
import { AdjustMode, TokensService, WalletService } from '@aigw/proto/billing/v1/billing';
import { ChannelsService } from '@aigw/proto/channels/v1/channels';
import { Health } from '@aigw/proto/grpc/health/v1/health';
import { LogsService } from '@aigw/proto/logs/v1/logs';
import { RelayAdminService } from '@aigw/proto/relay/v1/relay';
import { TasksService } from '@aigw/proto/tasks/v1/tasks';
import { ManageAction, OptionsService, UsersService } from '@aigw/proto/users/v1/users';
import type { DescService } from '@bufbuild/protobuf';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = { userId: 1, role: 100, username: 'root' };

/** The error code a call ends with ('OK' when it succeeds). */
async function outcome(call: () => Promise<unknown>): Promise<string> {
  try {
    await call();
    return 'OK';
  } catch (err) {
    const status = (err as { cause?: { code?: number } }).cause?.code;
    if (status === 12) return 'UNIMPLEMENTED';
    return err instanceof AppError ? err.code : String(err);
  }
}

/**
 * What an outsider's call must end with: UNAUTHENTICATED, or UNIMPLEMENTED on a server that does
 * not serve that gRPC service at all (tasks registers no handler yet; its health says so).
 */
async function expectedRefusal(health: ServiceClient<typeof Health>, serviceName: string): Promise<string> {
  const served = await health.check({ service: serviceName }).then(
    () => true,
    () => false,
  );
  return served ? 'UNAUTHENTICATED' : 'UNIMPLEMENTED';
}

describe('internal gRPC authentication on every service', () => {
  let stack: Stack;
  const clients: { close(): void }[] = [];
  const client = <S extends DescService>(desc: S, addr: string, auth?: CallSigner | false): ServiceClient<S> => {
    const c = createClient(desc, stack.env[addr] as string, auth === undefined ? {} : { auth });
    clients.push(c);
    return c;
  };
  /** A platform service's own credentials (as its process holds them). */
  const as = (svc: string) => createInternalAuth(keysOf(stackKeys(), svc));
  /** Credentials that claim to be the gateway, signed with a key the platform never issued. */
  const impostor = createInternalAuth(keysOf(generateKeySet(['gateway']), 'gateway'));

  let victim = 0;

  beforeAll(async () => {
    stack = await startStack();
    const { user } = await client(UsersService, 'USERS_ADDR').createUser({
      actor: ROOT,
      username: `v${Date.now().toString(36).slice(-8)}`,
      password: 'password123',
      role: 1,
      group: 'default',
    });
    victim = user?.id ?? 0;
  });

  afterAll(async () => {
    for (const c of clients) c.close();
    await stack?.stop();
  });

  // One RPC per gRPC server, each of which would leak or change something if it were open.
  const probes: [string, (auth: CallSigner | false) => Promise<unknown>, string, string][] = [
    [
      'users: ListOptions with secrets',
      (auth) => client(OptionsService, 'USERS_ADDR', auth).listOptions({ includeSecrets: true }),
      'USERS_ADDR',
      OptionsService.typeName,
    ],
    [
      'users: ManageUser',
      (auth) =>
        client(UsersService, 'USERS_ADDR', auth).manageUser({ actor: ROOT, id: victim, action: ManageAction.PROMOTE }),
      'USERS_ADDR',
      UsersService.typeName,
    ],
    [
      'channels: GetChannel with key',
      (auth) => client(ChannelsService, 'CHANNELS_ADDR', auth).getChannel({ id: 1, includeKey: true }),
      'CHANNELS_ADDR',
      ChannelsService.typeName,
    ],
    [
      'billing: AdjustQuota',
      (auth) =>
        client(WalletService, 'BILLING_ADDR', auth).adjustQuota({
          actor: ROOT,
          requestId: `adj-${Date.now()}`,
          userId: victim,
          mode: AdjustMode.SET,
          amount: 987_654_321,
        }),
      'BILLING_ADDR',
      WalletService.typeName,
    ],
    [
      'billing: ListTokens',
      (auth) => client(TokensService, 'BILLING_ADDR', auth).listTokens({ userId: victim }),
      'BILLING_ADDR',
      TokensService.typeName,
    ],
    [
      'relay: TestChannel',
      (auth) => client(RelayAdminService, 'RELAY_ADDR', auth).testChannel({ channelId: 1 }),
      'RELAY_ADDR',
      RelayAdminService.typeName,
    ],
    [
      'logs: QueryLogs',
      (auth) => client(LogsService, 'LOGS_ADDR', auth).queryLogs({}),
      'LOGS_ADDR',
      LogsService.typeName,
    ],
    [
      'tasks: ListTasks',
      (auth) => client(TasksService, 'TASKS_ADDR', auth).listTasks({}),
      'TASKS_ADDR',
      TasksService.typeName,
    ],
  ];

  it.each(
    probes,
  )('when %s is called without credentials, then it is refused UNAUTHENTICATED', async (_, call, addr, name) => {
    const expected = await expectedRefusal(client(Health, addr, false), name);
    expect(await outcome(() => call(false))).toBe(expected);
  });

  it.each(
    probes,
  )('when %s is called with a foreign key, then it is refused UNAUTHENTICATED', async (_, call, addr, name) => {
    const expected = await expectedRefusal(client(Health, addr, false), name);
    expect(await outcome(() => call(impostor))).toBe(expected);
  });

  it('when a service other than the gateway raises a wallet as root, then it is refused and the wallet is unchanged', async () => {
    const wallet = client(WalletService, 'BILLING_ADDR');
    const before = (await wallet.getWallet({ userId: victim })).wallet?.quota;
    for (const svc of ['relay', 'users', 'channels', 'logs', 'tasks']) {
      const code = await outcome(() =>
        client(WalletService, 'BILLING_ADDR', as(svc)).adjustQuota({
          actor: ROOT,
          requestId: `forged-${svc}-${Date.now()}`,
          userId: victim,
          mode: AdjustMode.SET,
          amount: 987_654_321,
        }),
      );
      expect([svc, code]).toEqual([svc, 'PERMISSION_DENIED']);
    }
    expect((await wallet.getWallet({ userId: victim })).wallet?.quota).toBe(before);
  });

  it('when a service allowed to call an RPC sends a root actor, then it cannot act as root', async () => {
    // billing may update options (as the system actor, user id 0), but not as a user.
    const options = client(OptionsService, 'USERS_ADDR', as('billing'));
    expect(await outcome(() => options.updateOption({ actor: ROOT, key: 'Notice', value: 'forged' }))).toBe(
      'UNAUTHENTICATED',
    );
  });

  it('when a gateway token signed for a common user carries a root actor, then the promotion is refused', async () => {
    const gateway = as('gateway');
    const boundToVictim: CallSigner = {
      tokenFor: (method) => gateway.tokenFor(method, { u: victim, r: 1, n: 'victim' }),
    };
    const users = client(UsersService, 'USERS_ADDR', boundToVictim);
    expect(await outcome(() => users.manageUser({ actor: ROOT, id: victim, action: ManageAction.PROMOTE }))).toBe(
      'UNAUTHENTICATED',
    );
    const { user } = await client(UsersService, 'USERS_ADDR').getUser({ id: victim });
    expect(user?.role).toBe(1);
  });

  it('when the relay asks for a channel key or every secret option, then it is refused', async () => {
    const relay = as('relay');
    expect(
      await outcome(() => client(ChannelsService, 'CHANNELS_ADDR', relay).getChannel({ id: 1, includeKey: true })),
    ).toBe('PERMISSION_DENIED');
    expect(await outcome(() => client(OptionsService, 'USERS_ADDR', relay).getOption({ key: 'SMTPToken' }))).toBe(
      'PERMISSION_DENIED',
    );
  });

  it('when a probe checks health without credentials, then every gRPC server answers', async () => {
    for (const addr of ['USERS_ADDR', 'CHANNELS_ADDR', 'BILLING_ADDR', 'RELAY_ADDR', 'LOGS_ADDR', 'TASKS_ADDR']) {
      expect((await client(Health, addr, false).check({ service: '' })).status).toBe(1);
    }
  });
});
