import { describe, expect, it } from 'vitest';
import { billingSourceDetails, moveToNextGroup } from './group-walk.ts';

describe('group walk', () => {
  it('when a cross-group token is in an auto group, then it moves to the next later group that serves, and only with the flag', () => {
    const serves = (g: string) => g !== 'b';
    const caller = { group: 'a', autoGroups: ['a', 'b', 'c', 'd'], crossGroupRetry: true };
    expect(moveToNextGroup(caller, serves)).toBe(true);
    expect(caller.group).toBe('c');
    expect(moveToNextGroup(caller, serves)).toBe(true);
    expect(caller.group).toBe('d');
    expect(moveToNextGroup(caller, serves)).toBe(false);
    expect(caller.group).toBe('d');
    const plain = { group: 'a', autoGroups: ['a', 'c'], crossGroupRetry: false };
    expect(moveToNextGroup(plain, serves)).toBe(false);
    expect(plain.group).toBe('a');
    expect(moveToNextGroup({ group: 'a', crossGroupRetry: true }, serves)).toBe(false);
  });

  it('when a subscription paid, then the log details name it; the wallet adds nothing', () => {
    const other: Record<string, unknown> = { ws: true };
    billingSourceDetails(other, '');
    expect(other).toEqual({ ws: true });
    billingSourceDetails(other, '7-0123456789ab');
    expect(other).toEqual({ ws: true, billing_source: 'subscription', subscription_id: '7-0123456789ab' });
  });
});
