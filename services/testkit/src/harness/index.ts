/** Stacks on the real servers for integration and browser tests, with clients to set them up. */
export * from './billing-harness.ts';
export * from './relay-harness.ts';
