/**
 * The submit side of per-call billing, shared by every platform: reserve the price before the
 * upstream call (refused with the wallet's message when it cannot be covered), give it back when
 * the upstream refuses, and log the charge once (type 2) when the task is created.
 */
import { AppError } from '@aigw/common';
import { LogType } from '@aigw/proto/common/v1/common';
import type { Authorized } from './authorize.ts';
import type { Peers, UsagePort } from './ports.ts';

export interface Charge {
  requestId: string;
  quota: number;
  modelPrice: number;
  groupRatio: number;
  model: string;
  /** Set by reserve(): the user subscription billing chose to pay the charge ('' the wallet). */
  subscriptionId?: string;
}

/**
 * Reserves a charge in the group it runs in, for its model (a subscription bound to them may pay
 * it: recorded in `c.subscriptionId`); `refuse` turns the wallet's refusal into the platform's error.
 */
export async function reserve(
  peers: Peers,
  a: Authorized,
  c: Charge,
  refuse: (message: string) => Error,
): Promise<void> {
  if (c.quota <= 0) return;
  try {
    const held = await peers.preConsume({
      requestId: c.requestId,
      userId: a.caller.user.id,
      tokenId: a.caller.token.id,
      amount: c.quota,
      model: c.model,
      group: a.group,
    });
    c.subscriptionId = held.subscriptionId;
  } catch (err) {
    if (err instanceof AppError && err.code === 'FAILED_PRECONDITION') throw refuse(err.message);
    throw err;
  }
}

/** Gives a reservation back (the upstream refused the submit): no log, nothing was charged. */
export async function giveBack(peers: Peers, c: Charge, onError: (err: unknown, what: string) => void) {
  if (c.quota <= 0) return;
  await peers.refund(c.requestId).catch((err) => onError(err, 'refund of a refused submit failed'));
}

/** Logs a kept charge (type 2) once, keyed by its request id. */
export async function logCharge(
  usage: UsagePort,
  a: Authorized,
  c: Charge,
  x: { channelId: number; content: string; other: Record<string, unknown>; ip: string },
  onError: (err: unknown, what: string) => void,
): Promise<void> {
  if (c.quota <= 0) return;
  await usage
    .publish({
      eventId: `charge:${c.requestId}`,
      requestId: c.requestId,
      type: LogType.CONSUME,
      userId: a.caller.user.id,
      username: a.caller.user.username,
      tokenId: a.caller.token.id,
      tokenName: a.caller.token.name,
      group: a.group,
      model: c.model,
      channelId: x.channelId,
      quota: c.quota,
      modelPrice: c.modelPrice,
      groupRatio: c.groupRatio,
      content: x.content,
      other: { ...x.other, ...paidBy(c.subscriptionId) },
      ip: x.ip,
    })
    .catch((err) => onError(err, 'charge usage event not published'));
}

/**
 * The fields a charged async task (music, video) starts with: who submitted it on which channel,
 * the reserved charge (held until the task ends), times and an immediate first poll.
 */
export function heldTaskFields(auth: Authorized, channelId: number, c: Charge, now: number) {
  return {
    user_id: auth.caller.user.id,
    username: auth.caller.user.username,
    token_id: auth.caller.token.id,
    token_name: auth.caller.token.name,
    group: auth.group,
    channel_id: channelId,
    fail_reason: '',
    created_at: Math.floor(now / 1000),
    submit_time: Math.floor(now / 1000),
    start_time: 0,
    finish_time: 0,
    submitted_ms: now,
    quota: c.quota,
    model: c.model,
    model_price: c.modelPrice,
    group_ratio: c.groupRatio,
    request_id: c.requestId,
    subscription_id: c.subscriptionId ?? '',
    billing: 'held' as const,
    final: false,
    notify_hook: '',
    next_poll_at: now,
  };
}

/** new-api's other.billing_source of a log row: the subscription that pays the charge, if one does. */
export function paidBy(subscriptionId: string | undefined): Record<string, string> {
  return subscriptionId ? { billing_source: 'subscription', subscription_id: subscriptionId } : {};
}
