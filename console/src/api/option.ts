import { request } from './request.ts';

export interface OptionItem {
  key: string;
  value: string;
}

/** GET /api/option/ (root): every option except write-only secrets. */
export const listOptions = () => request<OptionItem[]>('GET', '/api/option/');

/** PUT /api/option/: one key per call. */
export const updateOption = (key: string, value: string) =>
  request<null>('PUT', '/api/option/', { body: { key, value }, toast: false });

/** POST /api/option/rest_model_ratio: back to the default model ratios. */
export const resetModelRatios = () => request<null>('POST', '/api/option/rest_model_ratio');

/** DELETE /api/log/: logs before the time (unix seconds); data is the number deleted. */
export const deleteLogsBefore = (targetTimestamp: number) =>
  request<number>('DELETE', '/api/log/', { params: { target_timestamp: targetTimestamp } });
