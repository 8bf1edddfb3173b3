import type { Collection, Connection } from 'mongoose';

/** An online top-up order. */
export interface TopupOrder {
  /** The trade number sent to the payment gateway. */
  _id: string;
  user_id: number;
  username: string;
  /** Dollars bought. */
  amount: number;
  /** Money to pay (amount x Price x top-up group ratio). */
  money: number;
  payment_method: string;
  /** epay, stripe or creem (orders before card payments have none: epay). */
  payment_provider?: string;
  /** pending, success, failed, expired. */
  status: string;
  /**
   * What the provider was asked to charge, in minor units, and its currency (Stripe: the Checkout
   * Session's amount_total; Creem: the product's price). A paid event must match it. Orders made
   * before this was kept have none.
   */
  provider_amount?: number;
  provider_currency?: string;
  created_time: number;
  complete_time: number;
}

export interface OrderRepository {
  ensureIndexes(): Promise<void>;
  insert(order: TopupOrder): Promise<void>;
  get(tradeNo: string): Promise<TopupOrder | null>;
  complete(tradeNo: string, at: number): Promise<void>;
  listOfUser(userId: number, limit: number): Promise<TopupOrder[]>;
  /** A page of orders, newest first: of one user (userId > 0) or all, by trade number part and status. */
  page(
    filter: { userId: number; keyword: string; status: string },
    skip: number,
    limit: number,
  ): Promise<{ items: TopupOrder[]; total: number }>;
  /** pending -> `status` (failed, expired); false when the order was not pending. */
  settlePending(tradeNo: string, status: string, at: number): Promise<boolean>;
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export function orderRepository(conn: Connection): OrderRepository {
  const orders = conn.collection<TopupOrder>('topup_orders') as unknown as Collection<TopupOrder>;
  return {
    async ensureIndexes() {
      await orders.createIndex({ user_id: 1 });
      await orders.createIndex({ created_time: -1 });
    },
    async insert(order) {
      await orders.insertOne(order);
    },
    get: (tradeNo) => orders.findOne({ _id: tradeNo }),
    async complete(tradeNo, at) {
      await orders.updateOne({ _id: tradeNo }, { $set: { status: 'success', complete_time: at } });
    },
    listOfUser: (userId, limit) => orders.find({ user_id: userId }).sort({ created_time: -1 }).limit(limit).toArray(),
    async page(filter, skip, limit) {
      const q: Record<string, unknown> = {};
      if (filter.userId > 0) q.user_id = filter.userId;
      if (filter.keyword) q._id = { $regex: escapeRegex(filter.keyword) };
      if (filter.status) q.status = filter.status;
      const [items, total] = await Promise.all([
        orders.find(q).sort({ created_time: -1, _id: -1 }).skip(skip).limit(limit).toArray(),
        orders.countDocuments(q),
      ]);
      return { items, total };
    },
    async settlePending(tradeNo, status, at) {
      const r = await orders.updateOne({ _id: tradeNo, status: 'pending' }, { $set: { status, complete_time: at } });
      return r.modifiedCount === 1;
    },
  };
}
