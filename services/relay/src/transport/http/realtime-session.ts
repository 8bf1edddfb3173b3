/**
 * The money side of a Realtime session: its reservation (returned when it ends), a hold per
 * response beyond it, and one usage event per response (`ws: true` on its log row).
 */
import { groupRatioFor } from '@aigw/common';
import { LogType } from '@aigw/proto/common/v1/common';
import { quotaRefusalCode, type TokenInfo } from '../../domain/authorize.ts';
import { billingSourceDetails } from '../../domain/group-walk.ts';
import { type Price, preConsumeAmount, priceAt, type Ratios, settleQuota, tierDetails } from '../../domain/pricing.ts';
import type { Usage } from '../../domain/protocols/openai.ts';
import { preConsumeFailed, RelayError } from '../../domain/relay-error.ts';
import type { RelayCaller, RelayDeps, SkipTicket } from '../../domain/relay-request.ts';

/** One session: who, what it is priced at, where it runs, and what it holds. */
export interface RealtimeSession {
  requestId: string;
  caller: RelayCaller & { token: TokenInfo };
  model: string;
  ratios: Ratios;
  price: Price;
  /** What the user's group pays in the group used (it may move on: cross-group retry). */
  groupRatio: number;
  quotaPerUnit: number;
  /** The channels tried, the one serving and its model name (filled as the session opens). */
  tried: number[];
  channelId: number;
  upstreamModel: string;
  skip: SkipTicket | undefined;
  reserved: boolean;
  /** Charged so far (the skip's release counts it). */
  charged: number;
  unwatch: (() => void) | undefined;
  releaseSlot: () => void;
}

/** What the caller's user group pays in `group`. */
export function sessionGroupRatio(s: RealtimeSession, group: string): number {
  return groupRatioFor(s.caller.user.group, group, s.ratios.groupRatio, s.ratios.groupGroupRatio);
}

/**
 * A session is as dear as its responses: reserves what one response of PreConsumedQuota tokens
 * costs at the dearest token kind (skipped while the balances are ample). `watch` is called once
 * a reservation is made (the lease fence's watch; returns its removal).
 */
export async function reserveSession(
  p: RelayDeps,
  s: RealtimeSession,
  watch: () => (() => void) | undefined,
): Promise<void> {
  const { user, token } = s.caller;
  const preConsumed = p.settings.preConsumedQuota();
  const reserve = preConsumeAmount(s.price, s.groupRatio, s.quotaPerUnit, preConsumed, preConsumed, 0);
  if (p.balances.ample(user.id, token, reserve)) {
    s.skip = p.balances.hold(user.id, reserve, token);
    return;
  }
  try {
    // The model and group let billing choose a subscription that pays them, as on HTTP.
    const sentAt = Date.now();
    const res = await p.wallet.preConsume({
      requestId: s.requestId,
      userId: user.id,
      tokenId: token.id,
      amount: reserve,
      model: s.model,
      group: s.caller.group,
    });
    p.balances.observe(user.id, res.userQuota, sentAt, res.subscriptionActive);
    s.reserved = true;
    // Ended like a client that left when the lease cannot be renewed (lease-fence.ts).
    s.unwatch = watch();
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'FAILED_PRECONDITION') {
      const message = (err as Error).message || '用户额度不足';
      throw new RelayError(403, message, quotaRefusalCode(message));
    }
    void p.wallet.refund(s.requestId, user.id);
    throw preConsumeFailed(err);
  }
}

/** Gives the session's reservation and concurrency slot back (once). */
export function giveBack(p: RelayDeps, s: RealtimeSession): void {
  if (s.skip) p.balances.release(s.skip, s.charged);
  if (s.reserved) void p.wallet.refund(s.requestId, s.caller.user.id);
  s.unwatch?.();
  s.releaseSlot();
  s.skip = undefined;
  s.reserved = false;
}

/**
 * Each response is paid out of what the user has beyond the session's reservation: a hold of
 * its cost under the id its usage event settles (so the settle changes nothing), or, for an
 * ample balance, the relay's skip bound. A response the wallet cannot cover was already
 * delivered: it is billed all the same and ends the session, so a session spends at most its
 * reservation plus one response beyond the balance (the overspend bound of an HTTP request).
 */
async function holdResponse(
  p: RelayDeps,
  s: RealtimeSession,
  rid: string,
  quota: number,
): Promise<{ refusal?: RelayError; paidBy?: string }> {
  const { user, token } = s.caller;
  if (s.skip && p.balances.ample(user.id, token, quota)) return {};
  try {
    // With the model and group, billing may charge the response to a subscription (as on HTTP).
    const sentAt = Date.now();
    const res = await p.wallet.preConsume({
      requestId: rid,
      userId: user.id,
      tokenId: token.id,
      amount: quota,
      model: s.model,
      group: s.caller.group,
    });
    p.balances.observe(user.id, res.userQuota, sentAt, res.subscriptionActive);
    return { paidBy: res.subscriptionId ?? '' };
  } catch (err) {
    if ((err as { code?: string }).code !== 'FAILED_PRECONDITION') return { refusal: preConsumeFailed(err) };
    const message = (err as Error).message || '用户额度不足';
    return { refusal: new RelayError(403, message, quotaRefusalCode(message)) };
  }
}

/** The usage event of the session's `n`th response (its own request id: `<session>-<n>`). */
function emitResponse(
  p: RelayDeps,
  s: RealtimeSession,
  usage: Usage,
  quota: number,
  timing: { useTimeMs: number; firstTokenMs: number; n: number },
  paidBy: string,
): void {
  const { caller } = s;
  s.charged += quota;
  p.balances.spent(caller.token, quota);
  p.countTokens?.(caller, usage.promptTokens + usage.completionTokens);
  // A long-context tier prices the response by its prompt (settleQuota): its ratios on the row.
  const settled = priceAt(s.price, usage.promptTokens);
  const other: Record<string, unknown> = { ws: true };
  billingSourceDetails(other, paidBy);
  tierDetails(other, settled);
  p.usage({
    requestId: `${s.requestId}-${timing.n}`,
    caller,
    model: s.model,
    upstreamModel: s.upstreamModel,
    channelId: s.channelId,
    channelsTried: s.tried,
    usage,
    quota,
    useTimeMs: timing.useTimeMs,
    firstTokenMs: timing.firstTokenMs,
    isStream: true,
    type: LogType.CONSUME,
    statusCode: 200,
    errorMessage: '',
    price: settled,
    groupRatio: s.groupRatio,
    other,
  });
}

/** What the bridge asks of the session's billing. */
export interface SessionBilling {
  /** Bills a response; resolves to the refusal that ends the session, if any. */
  bill(usage: Usage, useTimeMs: number, firstTokenMs: number, n: number): Promise<RelayError | undefined>;
  /** The session ended: its reservation goes back after the last response's bill. */
  done(): void;
}

/** Responses billed one after the other (hold, then usage event); the reservation given back after the last. */
export function sessionBilling(p: RelayDeps, s: RealtimeSession): SessionBilling {
  let billing: Promise<unknown> = Promise.resolve();
  return {
    bill: (usage, useTimeMs, firstTokenMs, n) => {
      const quota = settleQuota(s.price, s.groupRatio, s.quotaPerUnit, usage);
      const turn = billing.then(async () => {
        const { refusal, paidBy } = await holdResponse(p, s, `${s.requestId}-${n}`, quota);
        emitResponse(p, s, usage, quota, { useTimeMs, firstTokenMs, n }, paidBy ?? '');
        return refusal;
      });
      billing = turn.catch(() => undefined);
      return turn;
    },
    done: () => void billing.then(() => giveBack(p, s)),
  };
}
