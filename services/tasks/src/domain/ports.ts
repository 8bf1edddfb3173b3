/** What the task use cases need from the outside, as plain interfaces (no gRPC, HTTP or Kafka). */
import type { OptionAccessors } from '@aigw/common';
import type { Token } from '@aigw/proto/billing/v1/billing';
import type { LogType } from '@aigw/proto/common/v1/common';

export interface CallerUser {
  id: number;
  username: string;
  group: string;
  role: number;
  status: number;
  deleted: boolean;
}

export interface Caller {
  token: Token;
  user: CallerUser | undefined;
}

export interface ChannelRef {
  id: number;
  name: string;
  type: number;
  key: string;
  baseUrl: string;
  status: number;
}

export interface Ratios {
  modelPrice: Record<string, number>;
  groupRatio: Record<string, number>;
  /** GroupGroupRatio: {userGroup: {usingGroup: ratio}}, in place of groupRatio for that user group. */
  groupGroupRatio?: Record<string, Record<string, number>>;
}

export interface Peers {
  /** The token of a key (without sk-) and its user; undefined for an unknown key. */
  caller(key: string): Promise<Caller | undefined>;
  ratios(): Promise<Ratios>;
  selectChannel(group: string, model: string): Promise<ChannelRef | undefined>;
  channel(id: number): Promise<ChannelRef | undefined>;
  /**
   * Reserves `amount`; `model` and `group` let billing choose a subscription bound to them.
   * Returns the user subscription that pays it ('' when the wallet does).
   */
  preConsume(req: {
    requestId: string;
    userId: number;
    tokenId: number;
    amount: number;
    model: string;
    group: string;
  }): Promise<{ subscriptionId: string }>;
  settle(req: { requestId: string; actual: number; userId: number; tokenId: number }): Promise<void>;
  /** Returns what was given back (0 when nothing was held any more). */
  refund(requestId: string): Promise<number>;
}

/** The options the task rules read (kept current by option-changed events). */
export type TaskOptions = Pick<OptionAccessors, 'bool' | 'number' | 'get' | 'text' | 'json'>;

/** One log-worthy money movement of a task: the charge at submit (type 2) or a refund (type 6). */
export interface TaskUsage {
  eventId: string;
  requestId: string;
  type: LogType.CONSUME | LogType.REFUND;
  userId: number;
  username: string;
  tokenId: number;
  tokenName: string;
  group: string;
  model: string;
  channelId: number;
  quota: number;
  modelPrice: number;
  groupRatio: number;
  content: string;
  other: Record<string, unknown>;
  ip: string;
}

export interface UsagePort {
  /** Resolves once Kafka acknowledged it. */
  publish(u: TaskUsage): Promise<void>;
}

/** An upstream answer: HTTP status and the parsed JSON body (undefined when not JSON). */
export interface UpstreamAnswer {
  status: number;
  body: unknown;
}

export interface UpstreamPort {
  post(channel: ChannelRef, path: string, body: unknown): Promise<UpstreamAnswer>;
  /** A multipart/form-data POST (OpenAI videos with a reference image). */
  postForm(channel: ChannelRef, path: string, form: FormData): Promise<UpstreamAnswer>;
  get(channel: ChannelRef, path: string): Promise<UpstreamAnswer>;
  del(channel: ChannelRef, path: string): Promise<UpstreamAnswer>;
  /** A GET whose body is streamed to the client as it is (video content). */
  raw(channel: ChannelRef, path: string): Promise<Response>;
}
