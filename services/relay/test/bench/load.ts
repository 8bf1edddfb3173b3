/** The benchmark's HTTP client (undici pools), re-exported so bench/run.ts at the root resolves it. */
export { Pool } from 'undici';
