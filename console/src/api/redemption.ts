import type { Page } from './admin-user.ts';
import { request } from './request.ts';

/** A redemption code (spec 02 section 3). */
export interface Redemption {
  id: number;
  user_id: number;
  name: string;
  key: string;
  status: number;
  quota: number;
  created_time: number;
  redeemed_time: number;
  used_user_id: number;
  /** Unix seconds after which it cannot be redeemed (new-api); 0 never. */
  expired_time: number;
}

export const listRedemptions = (p: number, pageSize: number) =>
  request<Page<Redemption>>('GET', '/api/redemption/', { params: { p, page_size: pageSize } });

export const searchRedemptions = (keyword: string, p: number, pageSize: number) =>
  request<Page<Redemption>>('GET', '/api/redemption/search', { params: { keyword, p, page_size: pageSize } });

export const getRedemption = (id: number) => request<Redemption>('GET', `/api/redemption/${id}`);

/** POST /api/redemption/: data lists the generated keys. */
export const createRedemptions = (body: { name: string; quota: number; count: number; expired_time: number }) =>
  request<string[]>('POST', '/api/redemption/', { body });

export const updateRedemption = (body: { id: number; name: string; quota: number; expired_time: number }) =>
  request<Redemption>('PUT', '/api/redemption/', { body });

export const setRedemptionStatus = (id: number, status: number) =>
  request<Redemption>('PUT', '/api/redemption/', { params: { status_only: true }, body: { id, status } });

export const deleteRedemption = (id: number) => request<null>('DELETE', `/api/redemption/${id}/`);

/** DELETE /api/redemption/invalid: used, disabled and expired codes; data is how many. */
export const deleteInvalidRedemptions = () => request<number>('DELETE', '/api/redemption/invalid');
