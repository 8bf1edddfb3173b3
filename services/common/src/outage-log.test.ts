import { describe, expect, it } from 'vitest';
import { outageLog } from './outage-log.ts';

describe('outage log', () => {
  it('when attempts keep failing, then one warn line (message, no stack) starts the outage and one info line ends it; the next outage is told again', () => {
    const lines: { level: string; fields: Record<string, unknown>; msg: string }[] = [];
    const logger = {
      warn: (fields: Record<string, unknown>, msg: string) => lines.push({ level: 'warn', fields, msg }),
      info: (fields: Record<string, unknown>, msg: string) => lines.push({ level: 'info', fields, msg }),
    };
    const log = outageLog(logger as never, { down: 'x unreadable', back: 'x readable again' });
    log.ok();
    for (let i = 0; i < 5; i++) log.failed(new Error('Connection is closed.'));
    log.ok();
    log.ok();
    log.failed('ECONNREFUSED');
    expect(lines).toEqual([
      { level: 'warn', fields: { err: 'Connection is closed.' }, msg: 'x unreadable' },
      { level: 'info', fields: { downMs: expect.any(Number), failures: 5 }, msg: 'x readable again' },
      { level: 'warn', fields: { err: 'ECONNREFUSED' }, msg: 'x unreadable' },
    ]);
  });
});
