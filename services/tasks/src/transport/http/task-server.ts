import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BadRequest, clientError, createPublicApp, type Logger, trustedProxies } from '@aigw/common';
import type { JimengDeps } from '../../domain/jimeng.ts';
import type { MjDeps } from '../../domain/mj-submit.ts';
import type { SunoDeps } from '../../domain/suno.ts';
import { withJsonErrors } from './errors.ts';
import { jimengRoutes } from './jimeng-routes.ts';
import { klingRoutes } from './kling-routes.ts';
import { mjRoutes, send } from './mj-routes.ts';
import { sunoRoutes } from './suno-routes.ts';
import { videoGenerationRoutes } from './video-generation-routes.ts';
import { videoRoutes } from './video-routes.ts';

/** A platform's routes: true when it answered the request. */
type Routes = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;

/** The answer to a request that failed: a malformed one is the client's error, anything else a 500. */
export function failedRequest(res: ServerResponse, err: unknown, logger: Logger): void {
  // A malformed request (a bad escape in the path...) is the client's error.
  const bad = clientError(err) ?? (err instanceof URIError ? new BadRequest(400, '请求的编码无效') : undefined);
  if (bad) {
    if (!res.headersSent) send(res, bad.status, { code: 4, description: bad.message, result: null });
    return;
  }
  logger.error({ err }, 'request failed');
  if (!res.headersSent) send(res, 500, { code: 4, description: '服务内部错误' });
}

/**
 * The public port's dispatcher: each platform's routes in turn (midjourney first), then the
 * express app (/healthz and the JSON 404); /metrics and /readyz are on the metrics port only
 * (docs/security.md).
 */
export function taskRequestHandler(
  deps: { mj: MjDeps; suno: SunoDeps; jimeng: JimengDeps; image(url: string): Promise<Response> },
  opts: { trustedProxies: string; logger: Logger },
) {
  const publicApp = withJsonErrors(createPublicApp(), opts.logger);
  const trusted = trustedProxies(opts.trustedProxies);
  const mjHttp = mjRoutes(deps.mj, { trusted, image: deps.image });
  const others: Routes[] = [
    sunoRoutes(deps.suno, { trusted }),
    videoRoutes(deps.suno, { trusted }),
    klingRoutes(deps.suno, { trusted }),
    jimengRoutes(deps.jimeng, { trusted }),
    videoGenerationRoutes(deps.jimeng, { trusted }),
  ];
  return (req: IncomingMessage, res: ServerResponse): void => {
    mjHttp(req, res)
      .then(async (handled) => {
        if (handled) return;
        for (const routes of others) if (await routes(req, res)) return;
        publicApp(req, res);
      })
      .catch((err) => failedRequest(res, err, opts.logger));
  };
}

/** Listens on the port (0: any); `close` ends the server and its open connections. */
export async function listenTaskHttp(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  port: number | undefined,
): Promise<{ port: number; close(): Promise<void> }> {
  const http: Server = createServer(handler);
  http.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(port, '0.0.0.0', () => resolve());
  });
  return {
    port: (http.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      }),
  };
}
