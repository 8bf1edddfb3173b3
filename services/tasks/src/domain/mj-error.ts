/** A refusal in midjourney-proxy's answer shape: `{code, description, result}` with an HTTP status. */
export class MjError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    readonly description: string,
  ) {
    super(description);
  }
}

/** midjourney-proxy's codes for refusals: 4 validation (and everything local), 24 banned prompt. */
export const MJ_CODE_INVALID = 4;
