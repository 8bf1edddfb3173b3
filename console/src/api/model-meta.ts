import type { Page } from './admin-user.ts';
import { request } from './request.ts';

/** A model vendor (new-api's vendor meta). */
export interface Vendor {
  id: number;
  name: string;
  description: string;
  /** A @lobehub/icons name. */
  icon: string;
  status: number;
  created_time: number;
  updated_time: number;
}

/** Model metadata (new-api's model meta); name_rule 0 exact, 1 prefix, 2 contains, 3 suffix. */
export interface ModelMeta {
  id: number;
  model_name: string;
  description: string;
  icon: string;
  tags: string;
  vendor_id: number;
  /** JSON text. */
  endpoints: string;
  status: number;
  sync_official: number;
  name_rule: number;
  created_time: number;
  updated_time: number;
  bound_channels: { name: string; type: number }[];
  enable_groups: string[];
  matched_models: string[];
  matched_count: number;
}

export type ModelMetaInput = Omit<
  ModelMeta,
  'id' | 'created_time' | 'updated_time' | 'bound_channels' | 'enable_groups' | 'matched_models' | 'matched_count'
> & { id?: number };
export type VendorInput = Pick<Vendor, 'name' | 'description' | 'icon' | 'status'> & { id?: number };

export const searchModelMetas = (q: { keyword: string; vendor: string; p: number; page_size: number }) =>
  request<Page<ModelMeta> & { vendor_counts: Record<string, number> }>('GET', '/api/models/search', { params: q });

export const createModelMeta = (body: ModelMetaInput) => request<ModelMeta>('POST', '/api/models/', { body });
export const updateModelMeta = (body: ModelMetaInput) => request<ModelMeta>('PUT', '/api/models/', { body });
export const setModelMetaStatus = (id: number, status: number) =>
  request<ModelMeta>('PUT', '/api/models/', { params: { status_only: true }, body: { id, status } });
export const deleteModelMeta = (id: number) => request<null>('DELETE', `/api/models/${id}`);

export const searchVendors = (keyword: string, p: number, pageSize: number) =>
  request<Page<Vendor>>('GET', '/api/vendors/search', { params: { keyword, p, page_size: pageSize } });
export const createVendor = (body: VendorInput) => request<Vendor>('POST', '/api/vendors/', { body });
export const updateVendor = (body: VendorInput) => request<Vendor>('PUT', '/api/vendors/', { body });
export const deleteVendor = (id: number) => request<null>('DELETE', `/api/vendors/${id}`);

/** GET /api/models/missing: data (new-api) has no catalogue entry; unpriced has neither price nor ratio. */
export const getMissingModels = async () => {
  const res = await request<string[]>('GET', '/api/models/missing');
  return { ...res, unpriced: (res as { unpriced?: string[] }).unpriced ?? [] };
};

export interface SyncConflict {
  model_name: string;
  fields: { field: string; local: unknown; upstream: unknown }[];
}
export const previewUpstreamSync = () =>
  request<{ missing: string[]; conflicts: SyncConflict[] }>('GET', '/api/models/sync_upstream/preview', {
    // The dialog shows the failure itself.
    toast: false,
  });
export const syncUpstream = (overwrite: { model_name: string; fields: string[] }[]) =>
  request<{
    created_models: number;
    created_vendors: number;
    updated_models: number;
    skipped_models: string[];
  }>('POST', '/api/models/sync_upstream', { body: { overwrite } });
