import type { DescMethod } from '@bufbuild/protobuf';

/**
 * Which services may call which RPCs (ADR 0006). A service's `default` applies to methods it does
 * not list. A gRPC service missing from this table may be called by any platform service holding
 * a valid key: add a line when adding one. Only the gateway authenticates end users, so only its
 * tokens may carry an actor (see ACTOR_ISSUERS); the gateway calls almost everything for the
 * console, the others call only what their code uses.
 */
export const CALLERS: Record<string, { default: readonly string[]; methods?: Record<string, readonly string[]> }> = {
  'aigw.users.v1.UsersService': {
    default: ['gateway'],
    methods: {
      GetUser: ['gateway', 'relay', 'tasks', 'billing'],
      // Quota warnings (billing) and admin alerts.
      NotifyUser: ['gateway', 'billing', 'channels'],
    },
  },
  'aigw.users.v1.PasskeysService': { default: ['gateway'] },
  'aigw.users.v1.OptionsService': {
    // Every service keeps an options cache (secrets included: SMTP, payment keys for their owners).
    default: ['gateway', 'users', 'channels', 'billing', 'relay', 'logs', 'tasks'],
    methods: {
      GetOption: ['gateway'],
      // billing seeds the default ratios as the system actor.
      UpdateOption: ['gateway', 'billing'],
    },
  },
  'aigw.channels.v1.ChannelsService': {
    default: ['gateway'],
    methods: {
      GetRelaySnapshot: ['relay', 'tasks'],
      SelectChannel: ['gateway', 'relay', 'tasks'],
      ListModelGroups: ['gateway', 'billing'],
      RecordTestResult: ['gateway', 'relay'],
    },
  },
  'aigw.billing.v1.WalletService': {
    default: ['gateway'],
    methods: {
      GetWallet: ['gateway', 'relay', 'tasks'],
      PreConsume: ['relay', 'tasks'],
      Settle: ['relay', 'tasks'],
      Refund: ['relay', 'tasks'],
      // Quota granted to new and invited users.
      Credit: ['users', 'gateway'],
    },
  },
  'aigw.billing.v1.TokensService': {
    default: ['gateway'],
    methods: { LookupToken: ['gateway', 'relay', 'tasks'], GetToken: ['gateway', 'relay', 'tasks'] },
  },
  'aigw.billing.v1.RedemptionsService': { default: ['gateway'] },
  'aigw.billing.v1.TopupService': { default: ['gateway'] },
  'aigw.billing.v1.PricingService': {
    default: ['gateway'],
    methods: { GetRatios: ['gateway', 'relay', 'tasks'] },
  },
  // Only relay processes hold leases.
  'aigw.billing.v1.RelayLeaseService': { default: ['relay'] },
  'aigw.logs.v1.LogsService': { default: ['gateway'] },
  'aigw.relay.v1.RelayAdminService': { default: ['channels', 'gateway'] },
  'aigw.tasks.v1.TasksService': { default: ['gateway'] },
};

/** Services whose tokens may carry an actor: the ones that authenticate end users. */
export const ACTOR_ISSUERS: readonly string[] = ['gateway'];

/** The services allowed to call a method (undefined: any platform service). */
export function callersOf(method: DescMethod): readonly string[] | undefined {
  const entry = CALLERS[method.parent.typeName];
  if (!entry) return undefined;
  return entry.methods?.[method.name] ?? entry.default;
}

/**
 * The audience of calls to a service: its proto package's domain, which is the name of the
 * service that serves it (`aigw.users.v1.OptionsService` -> `users`).
 */
export function audienceOf(serviceTypeName: string): string {
  const parts = serviceTypeName.split('.');
  return parts[0] === 'aigw' && parts.length >= 3 ? (parts[1] as string) : serviceTypeName;
}

/** Whether a method's request carries an `actor` (aigw.common.v1.Actor), checked against the token. */
export function hasActorField(method: DescMethod): boolean {
  const field = method.input.field.actor;
  return field?.fieldKind === 'message' && field.message.typeName === 'aigw.common.v1.Actor';
}
