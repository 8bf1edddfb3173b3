/**
 * The state rules shared by the console's paged lists (tokens, redemption codes, users, logs,
 * drawing and async tasks, top-up orders): pure, so they are tested without a browser.
 */

/** The page sizes every list offers (spec 02). */
export const PAGE_SIZES = [10, 20, 50, 100];

/** Which page of which query a list shows. */
export interface PagedState<Q> {
  page: number;
  pageSize: number;
  /** The filters last searched (not what is being typed). */
  query: Q;
}

export type PagedAction<Q> =
  /** The pager moved: a new page size starts again at page 1, otherwise the page asked for. */
  | { type: 'paginate'; page: number; pageSize: number }
  /** A search: its filters, from page 1. */
  | { type: 'search'; query: Q };

export function pagedReducer<Q>(state: PagedState<Q>, action: PagedAction<Q>): PagedState<Q> {
  switch (action.type) {
    case 'paginate':
      if (action.pageSize !== state.pageSize) return { ...state, page: 1, pageSize: action.pageSize };
      return action.page === state.page ? state : { ...state, page: action.page };
    case 'search':
      return { ...state, page: 1, query: action.query };
  }
}

/**
 * Whether a finished request may update the list: only the latest one does, so a slow answer
 * to an older page or search never replaces the rows of the newer one.
 */
export const isLatest = (requestSeq: number, latestSeq: number): boolean => requestSeq === latestSeq;
