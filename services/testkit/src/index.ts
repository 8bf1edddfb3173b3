/**
 * `@aigw/testkit`: what the tests of every package share. No product code imports it.
 * This entry is polling only (cheap to import from unit tests); stacks are in
 * `@aigw/testkit/harness`, fake providers in `@aigw/testkit/fakes`.
 */
export { type EventuallyOptions, eventually, preview } from './poll.ts';
