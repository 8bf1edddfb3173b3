import { request } from './request.ts';
import type { ApiResponse, Status } from './types.ts';

/** GET /api/status; the caller shows 无法正常连接至服务器！ on failure, so no generic toast here. */
export function getStatus(): Promise<ApiResponse<Status>> {
  return request<Status>('GET', '/api/status', { toast: false });
}

/** GET /api/notice: the admin's Notice (Markdown or HTML), empty when none. */
export function getNotice(): Promise<ApiResponse<string>> {
  return request<string>('GET', '/api/notice', { toast: false });
}

/** GET /api/about: the About content (Markdown, HTML or a URL to frame), empty when none. */
export function getAbout(): Promise<ApiResponse<string>> {
  return request<string>('GET', '/api/about', { toast: false });
}

/** GET /api/home_page_content: the home page content (Markdown, HTML or a URL to frame), empty when none. */
export function getHomePageContent(): Promise<ApiResponse<string>> {
  return request<string>('GET', '/api/home_page_content', { toast: false });
}
