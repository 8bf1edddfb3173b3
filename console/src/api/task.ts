import type { Page } from './admin-user.ts';
import { request } from './request.ts';

/** A drawing task (spec 02 section 3); times in milliseconds; channel_id only for admins. */
export interface MjTask {
  id: number;
  user_id: number;
  created_at: number;
  submit_time: number;
  start_time: number;
  finish_time: number;
  channel_id?: number;
  action: string;
  mj_id: string;
  code: number;
  status: string;
  progress: string;
  image_url: string;
  prompt: string;
  prompt_en: string;
  fail_reason: string;
  description?: string;
}

/** An async task (spec 02 section 3); times in seconds. */
export interface AsyncTask {
  id: number;
  user_id: number;
  created_at: number;
  submit_time: number;
  finish_time: number;
  progress: string;
  channel_id?: number;
  platform: string;
  action: string;
  task_id: string;
  status: string;
  fail_reason: string;
  data?: string;
}

export interface MjFilters {
  mj_id?: string;
  channel_id?: string;
  /** Milliseconds. */
  start_timestamp?: number;
  end_timestamp?: number;
}

export interface TaskFilters {
  task_id?: string;
  channel_id?: string;
  /** Seconds. */
  start_timestamp?: number;
  end_timestamp?: number;
}

const clean = (f: object) =>
  Object.fromEntries(Object.entries(f).filter(([, v]) => v !== '' && v !== undefined && v !== 0));

/** GET /api/mj/ (admin) or /api/mj/self/; the channel filter is sent only for admins. */
export const listMj = (admin: boolean, f: MjFilters, p: number, pageSize: number) =>
  request<Page<MjTask>>('GET', admin ? '/api/mj/' : '/api/mj/self/', {
    params: { ...clean(admin ? f : { ...f, channel_id: undefined }), p, page_size: pageSize },
  });

/** GET /api/task/ (admin) or /api/task/self. */
export const listTasks = (admin: boolean, f: TaskFilters, p: number, pageSize: number) =>
  request<Page<AsyncTask>>('GET', admin ? '/api/task/' : '/api/task/self', {
    params: { ...clean(admin ? f : { ...f, channel_id: undefined }), p, page_size: pageSize },
  });
