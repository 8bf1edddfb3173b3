/**
 * Which scope's list a log query reads (domain/log-index.ts), and the filters left to apply to its
 * entries.
 */

import { LogType } from '@aigw/proto/common/v1/common';
import { type CubeDoc, cubeable } from '../domain/log-cubes.ts';
import {
  countable,
  type EntryFilter,
  scopeAll,
  scopeChannel,
  scopeGroup,
  scopeModel,
  scopeToken,
  scopeType,
  scopeUser,
  scopeUserType,
} from '../domain/log-index.ts';
import type { Hour, LogIndexStore } from './log-index-store.ts';

export interface IndexQuery extends EntryFilter {
  user_id?: number;
  start?: number;
  end?: number;
}

/** The scope a query reads and the filters left to apply to its entries. */
export interface Plan {
  scope: string;
  f: EntryFilter;
}

const filterOf = (q: IndexQuery): EntryFilter => ({
  type: q.type,
  user_id: q.user_id,
  username: q.username,
  token_name: q.token_name,
  model_name: q.model_name,
  channel: q.channel,
  group: q.group,
});

const without = (all: EntryFilter, ...keys: (keyof EntryFilter)[]) => {
  const f = { ...all };
  for (const k of keys) delete f[k];
  return f;
};

/**
 * The plans of a username: its user's list; the filter is left to the entries only when the user
 * logged under other names too (a rename). Null: no plan answers (no such name, another user's
 * name, or a name several users had: every entry is filtered).
 */
async function usernamePlans(store: LogIndexStore, q: IndexQuery, all: EntryFilter): Promise<Plan[] | null> {
  const rare = q.type && q.type !== LogType.CONSUME ? q.type : 0;
  const ids = (await store.main.findOne({ _id: `n|${q.username}` }))?.ids ?? [];
  const [id] = ids;
  if (id === undefined || (q.user_id && !ids.includes(q.user_id))) return null;
  if (ids.length !== 1) return [];
  const names = (await store.main.findOne({ _id: `i|${id}` }))?.names ?? [];
  const only = names.length === 1 && names[0] === q.username;
  const plans: Plan[] = [
    { scope: scopeUser(id), f: only ? without(all, 'username', 'user_id') : without(all, 'user_id') },
  ];
  if (rare) {
    const f = only ? without(all, 'username', 'user_id', 'type') : without(all, 'user_id', 'type');
    plans.push({ scope: scopeUserType(id, rare), f });
  }
  return plans;
}

/** The scopes a query's filters name, each with the filters left for its entries. */
async function candidatesOf(store: LogIndexStore, q: IndexQuery): Promise<Plan[] | null> {
  const all = filterOf(q);
  const candidates: Plan[] = [];
  const rare = q.type && q.type !== LogType.CONSUME ? q.type : 0;
  if (q.user_id && rare) candidates.push({ scope: scopeUserType(q.user_id, rare), f: without(all, 'user_id', 'type') });
  else if (rare) candidates.push({ scope: scopeType(rare), f: without(all, 'type') });
  if (q.user_id) candidates.push({ scope: scopeUser(q.user_id), f: without(all, 'user_id') });
  if (q.username) {
    const plans = await usernamePlans(store, q, all);
    if (!plans) return null;
    candidates.push(...plans);
  }
  if (q.model_name) candidates.push({ scope: scopeModel(q.model_name), f: without(all, 'model_name') });
  if (q.channel) candidates.push({ scope: scopeChannel(q.channel), f: without(all, 'channel') });
  if (q.group) candidates.push({ scope: scopeGroup(q.group), f: without(all, 'group') });
  if (q.token_name) candidates.push({ scope: scopeToken(q.token_name), f: without(all, 'token_name') });
  return candidates;
}

/**
 * The scope a query reads, the filters left for its entries and the scope's hours in the range:
 * of the scopes its filters name (a user's, a username's, a model's, ..., a rare type's), one it
 * can count (only a type left), else one whose cubes answer the filters left (log-index-filtered.ts),
 * the one with the fewest logs on the range's last day first; everyone's when it names none. With
 * the chosen scope's hours come, read in the same commands, the cubes that may count them.
 */
export async function planOf(
  store: LogIndexStore,
  q: IndexQuery,
  lo: number,
  hi: number,
): Promise<Plan & { hours: Hour[]; cubes: Map<string, CubeDoc | null> }> {
  const candidates = await candidatesOf(store, q);
  // No user matches the username: user 0's list, which is empty.
  const plans = candidates === null ? [{ scope: scopeUser(0), f: filterOf(q) }] : candidates;
  if (plans.length === 0) plans.push({ scope: scopeAll, f: filterOf(q) });
  // The candidates' sizes on the range's last day (one directory each): with the cubes, the
  // scope read matters less than the number of documents read to choose it.
  const last = Math.max(lo, Math.floor(hi / 86_400) * 86_400);
  const hours = plans.length > 1 ? await Promise.all(plans.map((p) => store.hoursIn(p.scope, last, hi))) : [];
  const sizes = hours.map((hs) => hs.reduce((s, h) => s + h.slot.n, 0));
  const rank = (p: Plan) => (countable(p.f) ? 0 : cubeable(p.scope, p.f) ? 1 : 2);
  let best = 0;
  for (let i = 1; i < plans.length; i++) {
    const better = rank(plans[i] as Plan) - rank(plans[best] as Plan) || (sizes[i] as number) - (sizes[best] as number);
    if (better < 0) best = i;
  }
  const plan = plans[best] as Plan;
  return { ...plan, ...(await store.scopeRange(plan.scope, lo, hi, rank(plan) === 1)) };
}
