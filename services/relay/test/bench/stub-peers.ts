/**
 * In-memory stand-ins for the services the relay calls (users, options, channels, billing),
 * answering at once over real gRPC. The benchmark measures the relay itself: its auth, pricing,
 * billing calls (pre-consume, settle) and usage events all happen; only the peers' own database
 * work is left out. Usage: tsx services/relay/test/bench/stub-peers.ts <port> <upstream base url>
 */
import { service, startGrpcServer } from '@aigw/common';
import { PricingService, TokensService, WalletService } from '@aigw/proto/billing/v1/billing';
import { ChannelsService } from '@aigw/proto/channels/v1/channels';
import { OptionsService, UsersService } from '@aigw/proto/users/v1/users';

export const BENCH_KEY = 'benchbenchbenchbenchbenchbenchbenchbenchbenchbenc';
export const BENCH_MODEL = 'gpt-4o-mini';

export async function startStubPeers(port: number, upstream: string, slowUpstream = upstream) {
  let settles = 0;
  let preConsumes = 0;
  const options = [
    ['RetryTimes', '0'],
    ['PreConsumedQuota', '500'],
    ['QuotaPerUnit', '500000'],
    ['UserUsableGroups', '{"default":"默认分组"}'],
  ].map(([key, value]) => ({ key: key as string, value: value as string }));
  const server = await startGrpcServer({
    port,
    host: '127.0.0.1',
    services: [
      service(OptionsService, {
        listOptions: async () => ({ options, version: 1 }),
        listOptionChanges: async () => ({ options: [], version: 1 }),
      } as never),
      service(UsersService, {
        getUser: async (req: { id: number }) => ({
          user: { id: req.id, username: 'bench', group: 'default', role: 1, status: 1 },
        }),
      } as never),
      service(ChannelsService, {
        getRelaySnapshot: async () => ({
          version: 1,
          abilities: [
            { group: 'default', model: BENCH_MODEL, channelId: 1, priority: 0, weight: 1, enabled: true },
            { group: 'default', model: `${BENCH_MODEL}-slow`, channelId: 2, priority: 0, weight: 1, enabled: true },
          ],
          channels: [
            {
              id: 1,
              name: 'bench',
              type: 1,
              key: 'upstream-key',
              baseUrl: upstream,
              status: 1,
              autoBan: false,
              models: BENCH_MODEL,
              group: 'default',
            },
            {
              id: 2,
              name: 'bench-slow',
              type: 1,
              key: 'upstream-key',
              baseUrl: slowUpstream,
              status: 1,
              autoBan: false,
              models: `${BENCH_MODEL}-slow`,
              group: 'default',
            },
          ],
        }),
      } as never),
      service(TokensService, {
        lookupToken: async () => ({
          token: {
            id: 1,
            userId: 1,
            name: 'bench',
            key: BENCH_KEY,
            status: 1,
            remainQuota: 1e12,
            unlimitedQuota: true,
            expiredTime: -1,
            group: '',
          },
        }),
      } as never),
      service(WalletService, {
        getWallet: async (req: { userId: number }) => ({
          wallet: { userId: req.userId, quota: 1e15, usedQuota: 0, requestCount: 0 },
        }),
        preConsume: async (req: { amount: number }) => {
          preConsumes++;
          return { preConsumed: req.amount, userQuota: 1e15, tokenRemainQuota: 1e12 };
        },
        settle: async () => {
          settles++;
          return { delta: 0, userQuota: 1e15 };
        },
        refund: async () => ({ refunded: 0 }),
      } as never),
      service(PricingService, {
        getRatios: async () => ({
          modelRatio: { [BENCH_MODEL]: 0.075 },
          completionRatio: { [BENCH_MODEL]: 4 },
          modelPrice: {},
          groupRatio: { default: 1 },
          version: 1,
        }),
      } as never),
    ],
  });
  return { port: server.port, counts: () => ({ settles, preConsumes }), stop: () => server.stop(1000) };
}

if (process.argv[1]?.endsWith('stub-peers.ts')) {
  const s = await startStubPeers(
    Number(process.argv[2] ?? 0),
    String(process.argv[3]),
    String(process.argv[4] ?? process.argv[3]),
  );
  process.send?.({ ready: true, port: s.port });
  process.on('message', (m: { counts?: boolean }) => {
    if (m.counts) process.send?.({ counts: s.counts() });
  });
  console.error(`stub peers on ${s.port}`);
}
