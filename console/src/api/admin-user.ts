import type { UserRecord } from './account.ts';
import { request } from './request.ts';

/** A page of a list: data of GET /api/user/ and /api/user/search. */
export interface Page<T> {
  items: T[];
  total: number;
  page: number;
  page_size: number;
}

export type ManageAction = 'promote' | 'demote' | 'disable' | 'enable' | 'delete';

export const listUsers = (p: number, pageSize: number) =>
  request<Page<UserRecord>>('GET', '/api/user/', { params: { p, page_size: pageSize } });

export const searchUsers = (keyword: string, group: string, p: number, pageSize: number) =>
  request<Page<UserRecord>>('GET', '/api/user/search', { params: { keyword, group, p, page_size: pageSize } });

export const getUser = (id: number) => request<UserRecord>('GET', `/api/user/${id}`);

export const createUser = (body: { username: string; display_name?: string; password: string }) =>
  request<null>('POST', '/api/user/', { body });

export const updateUser = (body: {
  id: number;
  username?: string;
  display_name?: string;
  password?: string;
  group?: string;
  quota?: number;
  remark?: string;
}) => request<null>('PUT', '/api/user/', { body });

/** POST /api/user/manage: data is the user's new status and role. */
export const manageUser = (id: number, action: ManageAction) =>
  request<{ status: number; role: number }>('POST', '/api/user/manage', { body: { id, action } });

/** GET /api/group/: group names. */
export const listGroups = () => request<string[]>('GET', '/api/group/');
