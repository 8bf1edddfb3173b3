import { describe, expect, it } from 'vitest';
import { dayIn } from './checkin.ts';

describe('check-in day', () => {
  it('when a moment is placed in the operator time zone, then the calendar day is that zone’s', () => {
    const noonUtc = Date.UTC(2026, 0, 1, 12, 0, 0);
    expect(dayIn(noonUtc, 'UTC')).toBe('2026-01-01');
    expect(dayIn(noonUtc, 'Pacific/Kiritimati')).toBe('2026-01-02');
    expect(dayIn(noonUtc, 'Pacific/Pago_Pago')).toBe('2026-01-01');
    expect(dayIn(Date.UTC(2026, 0, 1, 16, 30), 'Asia/Shanghai')).toBe('2026-01-02');
  });

  it('when no zone or an unknown one is held, then the server’s own zone decides', () => {
    const t = Date.UTC(2026, 5, 15, 12);
    const local = new Intl.DateTimeFormat('en-CA', { year: 'numeric', month: '2-digit', day: '2-digit' }).format(t);
    expect(dayIn(t, '')).toBe(local);
    expect(dayIn(t, 'Nowhere/Land')).toBe(local);
  });
});
