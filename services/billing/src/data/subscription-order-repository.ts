import type { Collection, Connection } from 'mongoose';

/** new-api's SubscriptionOrder: a plan paid through a payment gateway, keyed by its trade number. */
export interface SubscriptionOrder {
  _id: string;
  user_id: number;
  username: string;
  plan_id: number;
  /** Money to pay: the plan's price_amount when ordered. */
  money: number;
  payment_method: string;
  payment_provider: string;
  /** pending, success, failed, expired. */
  status: string;
  create_time: number;
  complete_time: number;
}

export interface SubscriptionOrderRepository {
  ensureIndexes(): Promise<void>;
  insert(order: SubscriptionOrder): Promise<void>;
  get(tradeNo: string): Promise<SubscriptionOrder | null>;
  complete(tradeNo: string, at: number): Promise<void>;
  /** pending -> `status` (failed, expired); a paid order stays as it is. */
  settlePending(tradeNo: string, status: string, at: number): Promise<void>;
}

export function subscriptionOrderRepository(conn: Connection): SubscriptionOrderRepository {
  const orders = conn.collection<SubscriptionOrder>('subscription_orders') as unknown as Collection<SubscriptionOrder>;
  return {
    async ensureIndexes() {
      await orders.createIndex({ user_id: 1 });
    },
    async insert(order) {
      await orders.insertOne(order);
    },
    get: (tradeNo) => orders.findOne({ _id: tradeNo }),
    async complete(tradeNo, at) {
      await orders.updateOne({ _id: tradeNo }, { $set: { status: 'success', complete_time: at } });
    },
    async settlePending(tradeNo, status, at) {
      await orders.updateOne({ _id: tradeNo, status: 'pending' }, { $set: { status, complete_time: at } });
    },
  };
}
