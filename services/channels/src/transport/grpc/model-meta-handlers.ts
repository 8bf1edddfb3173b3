import { pageOf, type ServiceImpl } from '@aigw/common';
import type { ChannelsService as ChannelsServiceDesc } from '@aigw/proto/channels/v1/channels';
import type { ModelCatalogue } from '../../domain/model-meta.ts';
import type { UpstreamSync } from '../../domain/upstream-sync.ts';

export type CatalogueMethods =
  | 'listVendors'
  | 'getVendor'
  | 'createVendor'
  | 'updateVendor'
  | 'deleteVendor'
  | 'listModelMetas'
  | 'getModelMeta'
  | 'createModelMeta'
  | 'updateModelMeta'
  | 'deleteModelMeta'
  | 'listMissingModels'
  | 'previewUpstreamSync'
  | 'syncUpstream';

const EMPTY_VENDOR = { id: 0, name: '', description: '', icon: '', status: 1 };

const EMPTY_MODEL = {
  id: 0,
  modelName: '',
  description: '',
  icon: '',
  tags: '',
  vendorId: 0,
  endpoints: '',
  status: 1,
  syncOfficial: 1,
  nameRule: 0,
};

/** gRPC handlers of the model catalogue's part of ChannelsService (thin: they call the use cases). */
export function modelMetaHandlers(
  catalogue: ModelCatalogue,
  sync: UpstreamSync,
): Pick<ServiceImpl<typeof ChannelsServiceDesc>, CatalogueMethods> {
  return {
    async listVendors(req) {
      const p = pageOf(req.page);
      const r = await catalogue.listVendors({ keyword: req.keyword, skip: p.skip, limit: p.pageSize });
      return { items: r.items, page: { page: p.page, pageSize: p.pageSize, total: r.total } };
    },
    async getVendor(req) {
      return { vendor: await catalogue.getVendor(req.id) };
    },
    async createVendor(req) {
      return { vendor: await catalogue.createVendor(req.vendor ?? EMPTY_VENDOR) };
    },
    async updateVendor(req) {
      return { vendor: await catalogue.updateVendor(req.vendor ?? EMPTY_VENDOR) };
    },
    async deleteVendor(req) {
      await catalogue.removeVendor(req.id);
      return {};
    },
    async listModelMetas(req) {
      const p = pageOf(req.page);
      const r = await catalogue.listModels({
        keyword: req.keyword,
        vendor: req.vendor,
        status: req.status,
        syncOfficial: req.syncOfficial,
        skip: p.skip,
        limit: p.pageSize,
      });
      return {
        items: r.items,
        page: { page: p.page, pageSize: p.pageSize, total: r.total },
        vendorCounts: r.vendorCounts,
      };
    },
    async getModelMeta(req) {
      return { model: await catalogue.getModel(req.id) };
    },
    async createModelMeta(req) {
      return { model: await catalogue.createModel(req.model ?? EMPTY_MODEL) };
    },
    async updateModelMeta(req) {
      return { model: await catalogue.updateModel(req.model ?? EMPTY_MODEL, req.statusOnly) };
    },
    async deleteModelMeta(req) {
      await catalogue.removeModel(req.id);
      return {};
    },
    async listMissingModels() {
      return catalogue.missing();
    },
    async previewUpstreamSync(req) {
      const r = await sync.preview(req.locale);
      return {
        missing: r.missing,
        source: r.source,
        conflicts: r.conflicts.map((c) => ({
          modelName: c.modelName,
          fields: c.fields.map((f) => ({
            field: f.field,
            local: JSON.stringify(f.local),
            upstream: JSON.stringify(f.upstream),
          })),
        })),
      };
    },
    async syncUpstream(req) {
      return sync.apply({ locale: req.locale, overwrite: req.overwrite });
    },
  };
}
