import { startTelemetry } from '@aigw/common/telemetry';

await startTelemetry('aigw-billing');
const { createLogger, runMain } = await import('@aigw/common');
const { readConfig } = await import('./config.ts');
const { createApp } = await import('./app.ts');

const logger = createLogger('billing');
await runMain(await createApp(readConfig(), logger), logger);
