import { request } from './request.ts';
import type { ApiResponse, Status } from './types.ts';

/** GET /api/status; the caller shows 无法正常连接至服务器！ on failure, so no generic toast here. */
export function getStatus(): Promise<ApiResponse<Status>> {
  return request<Status>('GET', '/api/status', { toast: false });
}
