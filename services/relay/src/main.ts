import { startTelemetry } from '@aigw/common/telemetry';

await startTelemetry('aigw-relay');
const { createLogger, runMain } = await import('@aigw/common');
const { readConfig } = await import('./config.ts');
const { createApp } = await import('./app.ts');

const logger = createLogger('relay');
const config = readConfig();
// The forced exit comes after the drain (RELAY_DRAIN_MS) and the usage flush that follows it.
await runMain(await createApp(config, logger), logger, config.RELAY_FORCE_EXIT_MS);
