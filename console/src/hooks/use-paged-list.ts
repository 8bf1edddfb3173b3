import { type Dispatch, type SetStateAction, useCallback, useEffect, useReducer, useRef, useState } from 'react';
import type { ApiResponse } from '../api/types.ts';
import { isLatest, PAGE_SIZES, type PagedState, pagedReducer } from './paged-list-state.ts';

export interface PagedListOptions<T, Q> {
  /** Loads one page of the query; its envelope's data is the page. */
  fetch: (query: Q, page: number, pageSize: number) => Promise<ApiResponse<{ items: T[]; total: number }>>;
  /** The filters before any search. */
  initialQuery: Q;
  /** The first page size (a function is read once, e.g. from local storage). */
  initialPageSize?: number | (() => number);
  /** Called with a page size the user chose (the log pages keep it locally). */
  onPageSizeChange?: (pageSize: number) => void;
  /** Values besides the query the fetch reads (e.g. whether the caller is an admin): a change reloads. */
  deps?: readonly unknown[];
}

export interface PagedList<T, Q> extends PagedState<Q> {
  rows: T[];
  /** For updating one row in place after an action (the list is not reloaded). */
  setRows: Dispatch<SetStateAction<T[]>>;
  total: number;
  loading: boolean;
  /** Shows `query` from page 1. */
  search: (query: Q) => void;
  /** Loads the current page again (after a create, an edit or a delete). */
  reload: () => Promise<void>;
  /** The pager's handler: a new page size starts at page 1. */
  onPageChange: (page: number, pageSize: number) => void;
  /** The Arco Table pagination the lists share: total shown, page sizes 10/20/50/100. */
  pagination: {
    current: number;
    pageSize: number;
    total: number;
    showTotal: true;
    sizeCanChange: true;
    sizeOptions: number[];
    onChange: (page: number, pageSize: number) => void;
  };
}

/** One paged list: page, page size, total, loading, the searched filters and reload. */
export function usePagedList<T, Q>(options: PagedListOptions<T, Q>): PagedList<T, Q> {
  const { initialQuery, initialPageSize = 10, onPageSizeChange, deps = [] } = options;
  const [state, dispatch] = useReducer(pagedReducer<Q>, undefined, () => ({
    page: 1,
    pageSize: typeof initialPageSize === 'function' ? initialPageSize() : initialPageSize,
    query: initialQuery,
  }));
  const [rows, setRows] = useState<T[]>([]);
  const [total, setTotal] = useState(0);
  const [loading, setLoading] = useState(false);
  // The latest fetch function, read when loading (pages pass a new closure every render).
  const fetchRef = useRef(options.fetch);
  fetchRef.current = options.fetch;
  const seq = useRef(0);

  const { page, pageSize, query } = state;
  const reload = useCallback(async () => {
    const mine = ++seq.current;
    setLoading(true);
    const res = await fetchRef.current(query, page, pageSize);
    if (!isLatest(mine, seq.current)) return;
    setLoading(false);
    if (res.success && res.data) {
      setRows(res.data.items);
      setTotal(res.data.total);
    }
  }, [page, pageSize, query, ...deps]);

  useEffect(() => {
    void reload();
  }, [reload]);

  const onPageChange = useCallback(
    (p: number, size: number) => {
      if (size !== pageSize) onPageSizeChange?.(size);
      dispatch({ type: 'paginate', page: p, pageSize: size });
    },
    [pageSize, onPageSizeChange],
  );
  const search = useCallback((q: Q) => dispatch({ type: 'search', query: q }), []);

  return {
    ...state,
    rows,
    setRows,
    total,
    loading,
    search,
    reload,
    onPageChange,
    pagination: {
      current: page,
      pageSize,
      total,
      showTotal: true,
      sizeCanChange: true,
      sizeOptions: PAGE_SIZES,
      onChange: onPageChange,
    },
  };
}
