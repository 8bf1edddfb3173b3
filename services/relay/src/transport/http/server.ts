import { httpMetrics, mountOps, type ReadinessCheck } from '@aigw/common';
import express, { type Express } from 'express';

/** The relay's HTTP surface. Errors use the OpenAI error shape. */
export function createRelayServer({ readiness }: { readiness: Record<string, ReadinessCheck> }): Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(httpMetrics());
  mountOps(app, readiness);
  app.use((req, res) => {
    res.status(404).json({
      error: { message: `Invalid URL (${req.method} ${req.path})`, type: 'invalid_request_error', param: null, code: null },
    });
  });
  return app;
}
