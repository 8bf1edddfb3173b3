/**
 * Fake upstream, identity and payment providers shared by more than one test file. Each speaks its
 * provider's real wire format on a loopback port and records what it received.
 */
export * from './fake-bedrock.ts';
export * from './fake-claude-extras.ts';
export * from './fake-coze.ts';
export * from './fake-jimeng.ts';
export * from './fake-kling.ts';
export * from './fake-midjourney.ts';
export * from './fake-openai.ts';
export * from './fake-provider.ts';
export * from './fake-responses.ts';
export * from './fake-stripe.ts';
export * from './fake-suno.ts';
export * from './fake-vertex.ts';
export * from './fake-video.ts';
export * from './wire-claude.ts';
