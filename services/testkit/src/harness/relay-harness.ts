/**
 * The relay harness (the relay's, the tasks', the gateway's proxy and log tests, the browser tests
 * and bench/): a stack on the real servers (users, channels, billing, logs, relay, gateway), gRPC
 * clients for setting up users, wallets, tokens, channels and options, and `routable`.
 * No vitest import on its path: bench/ loads it under plain tsx.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { createClient } from '@aigw/common';
import { type Stack, startStack } from '@aigw/local-stack/stack';
import { CreditReason, TokensService, WalletService } from '@aigw/proto/billing/v1/billing';
import { ChannelsService } from '@aigw/proto/channels/v1/channels';
import { LogsService } from '@aigw/proto/logs/v1/logs';
import { OptionsService, UsersService } from '@aigw/proto/users/v1/users';
import { eventually } from '../poll.ts';

export interface RelayStack {
  stack: Stack;
  users: ReturnType<typeof createClient<typeof UsersService>>;
  options: ReturnType<typeof createClient<typeof OptionsService>>;
  channels: ReturnType<typeof createClient<typeof ChannelsService>>;
  tokens: ReturnType<typeof createClient<typeof TokensService>>;
  wallet: ReturnType<typeof createClient<typeof WalletService>>;
  logs: ReturnType<typeof createClient<typeof LogsService>>;
  stop(): Promise<void>;
}

export async function startRelayStack(
  env: Record<string, string> = {},
  relayEnv: Record<string, string> = {},
): Promise<RelayStack> {
  const stack = await startStack({
    services: ['users', 'channels', 'billing', 'logs', 'relay', 'gateway'],
    env: { RATE_LIMIT_API: '1000000', RATE_LIMIT_CRITICAL: '100000', RATE_LIMIT_WEB: '100000', ...env },
    serviceEnv: { relay: relayEnv },
  });
  return clientsFor(stack);
}

/** gRPC clients for a stack started elsewhere (e.g. the browser tests' harness); stop() also stops the stack. */
export function clientsFor(stack: Stack): RelayStack {
  const users = createClient(UsersService, stack.env.USERS_ADDR as string);
  const options = createClient(OptionsService, stack.env.USERS_ADDR as string);
  const channels = createClient(ChannelsService, stack.env.CHANNELS_ADDR as string);
  const tokens = createClient(TokensService, stack.env.BILLING_ADDR as string);
  const wallet = createClient(WalletService, stack.env.BILLING_ADDR as string);
  const logs = createClient(LogsService, stack.env.LOGS_ADDR as string);
  return {
    stack,
    users,
    options,
    channels,
    tokens,
    wallet,
    logs,
    async stop() {
      for (const c of [users, options, channels, tokens, wallet, logs]) c.close();
      await stack.stop();
    },
  };
}

const ROOT = { userId: 1, role: 100, username: 'root' };

/** A user with `quota` in the wallet and an API token; returns the token key with sk-. */
export async function userWithToken(
  s: RelayStack,
  opts: { quota?: number; role?: number; group?: string; token?: Record<string, unknown> } = {},
): Promise<{ userId: number; username: string; key: string; tokenId: number }> {
  const username = `r${Date.now().toString(36).slice(-5)}${randomInt(1000, 9999)}`.slice(0, 12);
  const { user } = await s.users.createUser({
    actor: ROOT,
    username,
    displayName: username,
    password: 'password123',
    role: opts.role ?? 1,
    group: opts.group ?? 'default',
  });
  const userId = user?.id ?? 0;
  if (opts.quota !== 0) {
    await s.wallet.credit({
      requestId: `seed-${randomBytes(6).toString('hex')}`,
      userId,
      amount: opts.quota ?? 10_000_000,
      reason: CreditReason.TOPUP,
      username,
    });
  }
  const { tokens } = await s.tokens.createTokens({
    userId,
    name: 'test-token',
    remainQuota: 5_000_000,
    expiredTime: -1,
    unlimitedQuota: true,
    ...opts.token,
  });
  const t = tokens[0];
  return { userId, username, key: `sk-${t?.key}`, tokenId: t?.id ?? 0 };
}

export interface ChannelSpec {
  type: number;
  baseUrl: string;
  key: string;
  models: string;
  group?: string;
  priority?: number;
  weight?: number;
  modelMapping?: string;
  statusCodeMapping?: string;
  autoBan?: number;
  other?: string;
  /** new-api's other settings as JSON text (advanced custom's advanced_routes...). */
  settings?: string;
  name?: string;
}

export async function createChannel(s: RelayStack, spec: ChannelSpec): Promise<number> {
  const { ids } = await s.channels.createChannels({
    channel: {
      name: spec.name ?? `ch-${randomBytes(3).toString('hex')}`,
      type: spec.type,
      key: spec.key,
      baseUrl: spec.baseUrl,
      models: spec.models,
      group: spec.group ?? 'default',
      priority: spec.priority ?? 0,
      weight: spec.weight ?? 0,
      modelMapping: spec.modelMapping ?? '',
      statusCodeMapping: spec.statusCodeMapping ?? '',
      autoBan: spec.autoBan ?? 1,
      other: spec.other ?? '',
      settings: spec.settings ?? '',
      status: 1,
    },
  });
  return ids[0] ?? 0;
}

/** Waits until the relay routes `model` for a key (its snapshot caught up with the channel). */
export async function routable(relayUrl: string, key: string, model: string): Promise<void> {
  await eventually(
    async () => {
      const res = await fetch(`${relayUrl}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
      const body = (await res.json()) as { data?: { id: string }[] };
      return body.data?.some((m) => m.id === model) ?? false;
    },
    (v) => v,
    { what: `the relay routing ${model}` },
  );
}

export async function setOption(s: RelayStack, key: string, value: string): Promise<void> {
  await s.options.updateOption({ actor: ROOT, key, value });
}

/** Unique model names per test keep tests on one stack apart. */
export function modelName(base: string): string {
  return `${base}-t${randomBytes(3).toString('hex')}`;
}
