import type { ServiceImpl } from '@aigw/common';
import { notFound } from '@aigw/common/errors';
import type { OptionsService as OptionsServiceDesc } from '@aigw/proto/users/v1/users';
import type { OptionsService } from '../../domain/options-service.ts';

/** gRPC handlers of OptionsService: thin, they only translate to the use cases. */
export function optionsHandlers(service: OptionsService): ServiceImpl<typeof OptionsServiceDesc> {
  return {
    async listOptions(req) {
      return service.list(req.includeSecrets);
    },
    async getOption(req) {
      const value = await service.get(req.key);
      if (value === undefined) throw notFound(`未知的设置项：${req.key}`);
      return { option: { key: req.key, value } };
    },
    async updateOption(req) {
      const { key, value, version } = await service.update(req.key, req.value);
      return { option: { key, value }, version };
    },
    async listOptionChanges(req) {
      return service.changedSince(req.sinceVersion);
    },
  };
}
