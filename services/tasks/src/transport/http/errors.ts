import { clientError, type createPublicApp, type Logger } from '@aigw/common';

type App = ReturnType<typeof createPublicApp>;
interface Req {
  method: string;
  path: string;
}
interface Res {
  headersSent: boolean;
  status(code: number): { json(body: unknown): unknown };
}

/** The relay-style error body of the task routes (/mj, /suno): `{error: {message, type}}`. */
const errorBody = (message: string, type: string) => ({ error: { message, type, param: null, code: null } });

/**
 * Ends the tasks service's HTTP app: an unknown path answers a JSON 404, a malformed request its
 * 4xx, and an unexpected exception a 500 that is logged; none of them ends the process.
 */
export function withJsonErrors(app: App, logger: Logger): App {
  app.use((req: Req, res: Res) => {
    res.status(404).json(errorBody(`Invalid URL (${req.method} ${req.path})`, 'invalid_request_error'));
  });
  app.use((err: unknown, req: Req, res: Res, _next: unknown) => {
    const bad = clientError(err);
    if (!bad) logger.error({ err, path: req.path }, 'tasks request failed');
    if (res.headersSent) return;
    if (bad) res.status(bad.status).json(errorBody(bad.message, 'invalid_request_error'));
    else res.status(500).json(errorBody('服务器内部错误', 'server_error'));
  });
  return app;
}
