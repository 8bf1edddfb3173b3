import { describe, expect, it } from 'vitest';
import { isLatest, PAGE_SIZES, type PagedState, pagedReducer } from './paged-list-state.ts';

const start: PagedState<{ keyword: string }> = { page: 3, pageSize: 20, query: { keyword: 'a' } };

describe('paged list state', () => {
  it('when the pager moves to another page at the same size, then that page shows with the same query', () => {
    expect(pagedReducer(start, { type: 'paginate', page: 5, pageSize: 20 })).toEqual({
      page: 5,
      pageSize: 20,
      query: { keyword: 'a' },
    });
  });

  it('when the page size changes, then the list starts again at page 1 whatever page the pager reports', () => {
    expect(pagedReducer(start, { type: 'paginate', page: 7, pageSize: 50 })).toEqual({
      page: 1,
      pageSize: 50,
      query: { keyword: 'a' },
    });
  });

  it('when the same page is asked for again, then the state is unchanged (nothing reloads)', () => {
    expect(pagedReducer(start, { type: 'paginate', page: 3, pageSize: 20 })).toBe(start);
  });

  it('when a search is made, then it shows from page 1 at the same size', () => {
    const next = pagedReducer(start, { type: 'search', query: { keyword: 'b' } });
    expect(next).toEqual({ page: 1, pageSize: 20, query: { keyword: 'b' } });
  });

  it('when requests overlap, then only the latest may update the list', () => {
    expect(isLatest(2, 3)).toBe(false);
    expect(isLatest(3, 3)).toBe(true);
  });

  it('when the sizes are offered, then they are 10, 20, 50 and 100 (spec 02)', () => {
    expect(PAGE_SIZES).toEqual([10, 20, 50, 100]);
  });
});
