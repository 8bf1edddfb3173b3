import { nextSequence } from '@aigw/common';
import type { Collection, Connection } from 'mongoose';

/** A subscription plan (new-api's SubscriptionPlan fields, plus daily/weekly/monthly windows and a binding). */
export interface PlanDoc {
  _id: number;
  title: string;
  subtitle: string;
  price_amount: number;
  currency: string;
  duration_unit: string;
  duration_value: number;
  custom_seconds: number;
  enabled: boolean;
  sort_order: number;
  allow_balance_pay: boolean;
  max_purchase_per_user: number;
  daily_quota: number;
  weekly_quota: number;
  monthly_quota: number;
  total_amount: number;
  models: string[];
  group: string;
  /** new-api's card payment ids (missing on plans saved before them: not sold by card). */
  stripe_price_id?: string;
  creem_product_id?: string;
  created_at: number;
  updated_at: number;
}

export interface PlanRepository {
  ensureIndexes(): Promise<void>;
  list(enabledOnly: boolean): Promise<PlanDoc[]>;
  get(id: number): Promise<PlanDoc | null>;
  create(plan: Omit<PlanDoc, '_id'>): Promise<PlanDoc>;
  /** Replaces a plan's fields; null when it does not exist. */
  update(id: number, plan: Omit<PlanDoc, '_id' | 'created_at'>): Promise<PlanDoc | null>;
  setEnabled(id: number, enabled: boolean, at: number): Promise<PlanDoc | null>;
}

export function planRepository(conn: Connection): PlanRepository {
  const plans = conn.collection<PlanDoc>('subscription_plans') as unknown as Collection<PlanDoc>;
  return {
    async ensureIndexes() {
      await plans.createIndex({ enabled: 1 });
    },
    // new-api's order: sort_order desc, id desc.
    list: (enabledOnly) =>
      plans
        .find(enabledOnly ? { enabled: true } : {})
        .sort({ sort_order: -1, _id: -1 })
        .toArray(),
    get: (id) => plans.findOne({ _id: id }),
    async create(plan) {
      const doc = { _id: await nextSequence(conn, 'subscription_plans'), ...plan };
      await plans.insertOne(doc);
      return doc;
    },
    async update(id, plan) {
      return plans.findOneAndUpdate({ _id: id }, { $set: plan }, { returnDocument: 'after' });
    },
    async setEnabled(id, enabled, at) {
      return plans.findOneAndUpdate({ _id: id }, { $set: { enabled, updated_at: at } }, { returnDocument: 'after' });
    },
  };
}
