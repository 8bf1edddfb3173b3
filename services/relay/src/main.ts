import { startTelemetry } from '@aigw/common/telemetry';

await startTelemetry('aigw-relay');
const { createLogger, runMain } = await import('@aigw/common');
const { readConfig } = await import('./config.ts');
const { createApp } = await import('./app.ts');

const logger = createLogger('relay');
await runMain(await createApp(readConfig(), logger), logger);
