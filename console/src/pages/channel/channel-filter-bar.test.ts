import { describe, expect, it } from 'vitest';
import { isSearch, queryOf } from './channel-filter-bar.tsx';

describe('channel search', () => {
  it('when the filters are typed with spaces or cleared, then the query is trimmed and empty for a cleared field', () => {
    expect(queryOf({ keyword: ' gpt ', model: ' 4o ', group: 'vip' })).toEqual({
      keyword: 'gpt',
      group: 'vip',
      model: '4o',
    });
    expect(queryOf({ keyword: undefined, group: undefined })).toEqual({ keyword: '', group: '', model: '' });
  });

  it('when no filter is set, then the plain list is asked for; any one filter searches', () => {
    expect(isSearch(queryOf({ keyword: '  ' }))).toBe(false);
    expect(isSearch(queryOf({ group: 'default' }))).toBe(true);
    expect(isSearch(queryOf({ model: 'gpt' }))).toBe(true);
  });
});
