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
  /** pending, success. */
  status: string;
  created_time: number;
  complete_time: number;
}

export interface OrderRepository {
  ensureIndexes(): Promise<void>;
  insert(order: TopupOrder): Promise<void>;
  get(tradeNo: string): Promise<TopupOrder | null>;
  complete(tradeNo: string, at: number): Promise<void>;
  listOfUser(userId: number, limit: number): Promise<TopupOrder[]>;
}

export function orderRepository(conn: Connection): OrderRepository {
  const orders = conn.collection<TopupOrder>('topup_orders') as unknown as Collection<TopupOrder>;
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
    listOfUser: (userId, limit) => orders.find({ user_id: userId }).sort({ created_time: -1 }).limit(limit).toArray(),
  };
}
