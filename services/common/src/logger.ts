import { trace } from '@opentelemetry/api';
import { type Logger, pino } from 'pino';

export type { Logger };

/**
 * Structured JSON logger. Every line carries the active trace and span ids, so logs join traces.
 */
export function createLogger(service: string, level = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({
    name: service,
    level,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    mixin() {
      const span = trace.getActiveSpan();
      if (!span) return {};
      const ctx = span.spanContext();
      return { trace_id: ctx.traceId, span_id: ctx.spanId };
    },
    redact: { paths: ['password', 'key', '*.password', '*.key', 'authorization'], censor: '[redacted]' },
  });
}
