/** Helpers for tests (`@aigw/common/testing`); no product code imports this. */
export { type EventuallyOptions, eventually, preview } from './poll.ts';
