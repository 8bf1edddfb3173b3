import type { Logger, ServiceClient } from '@aigw/common';
import { AppError } from '@aigw/common/errors';
import type { ChannelsService } from '@aigw/proto/channels/v1/channels';

/** The models a group may use (GET /api/user/models), from the channels service's abilities. */
export interface ModelsGateway {
  forGroup(group: string): Promise<string[]>;
}

export function modelsGateway(client: ServiceClient<typeof ChannelsService>, logger: Logger): ModelsGateway {
  return {
    async forGroup(group) {
      try {
        return (await client.listGroupModels({ group })).models;
      } catch (err) {
        // The profile card stays usable (no chips) while channels is down.
        if (!(err instanceof AppError) || !['UNAVAILABLE', 'INTERNAL', 'DEADLINE_EXCEEDED'].includes(err.code))
          throw err;
        logger.warn({ err }, 'group models unavailable');
        return [];
      }
    },
  };
}
