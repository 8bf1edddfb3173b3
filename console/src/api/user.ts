import { request } from './request.ts';
import type { ApiResponse, User } from './types.ts';

export interface LoginBody {
  username: string;
  password: string;
}

/** POST /api/user/login; data is the user to store. */
export function login(body: LoginBody, turnstile = ''): Promise<ApiResponse<User>> {
  return request<User>('POST', '/api/user/login', { params: { turnstile }, body });
}

/** GET /api/user/logout. */
export function logout(): Promise<ApiResponse<null>> {
  return request<null>('GET', '/api/user/logout');
}
