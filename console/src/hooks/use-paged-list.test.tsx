// @vitest-environment happy-dom
import { act } from 'react';
import { createRoot } from 'react-dom/client';
import { describe, expect, it } from 'vitest';
import type { ApiResponse } from '../api/types.ts';
import { type PagedList, usePagedList } from './use-paged-list.ts';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

type Answer = ApiResponse<{ items: string[]; total: number }>;

/** Renders the hook over a fetch whose answers the test releases by hand, in any order. */
function harness() {
  const calls: { query: string; page: number; pageSize: number; answer: (a: Answer) => void }[] = [];
  let list: PagedList<string, string> | undefined;
  function Probe() {
    list = usePagedList<string, string>({
      initialQuery: '',
      fetch: (query, page, pageSize) => new Promise<Answer>((answer) => calls.push({ query, page, pageSize, answer })),
    });
    return null;
  }
  const root = createRoot(document.createElement('div'));
  act(() => root.render(<Probe />));
  const reply = async (i: number, items: string[], total: number) =>
    act(async () => calls[i]?.answer({ success: true, message: '', data: { items, total } }));
  return { calls, reply, current: () => list as PagedList<string, string>, unmount: () => act(() => root.unmount()) };
}

describe('usePagedList', () => {
  it('when a search follows a page change, then the search loads page 1 and a late answer to the older page is dropped', async () => {
    const h = harness();
    expect(h.calls.map((c) => [c.query, c.page, c.pageSize])).toEqual([['', 1, 10]]);
    await h.reply(0, ['a', 'b'], 25);
    expect(h.current()).toMatchObject({ rows: ['a', 'b'], total: 25, loading: false });
    expect(h.current().pagination).toMatchObject({
      current: 1,
      pageSize: 10,
      total: 25,
      sizeOptions: [10, 20, 50, 100],
    });

    act(() => h.current().pagination.onChange(3, 10));
    act(() => h.current().search('x'));
    expect(h.calls.map((c) => [c.query, c.page])).toEqual([
      ['', 1],
      ['', 3],
      ['x', 1],
    ]);
    expect(h.current().loading).toBe(true);
    await h.reply(2, ['x1'], 1);
    await h.reply(1, ['late'], 25);
    expect(h.current()).toMatchObject({ rows: ['x1'], total: 1, page: 1, query: 'x', loading: false });

    // A new size starts at page 1; reload asks for the same page again.
    act(() => h.current().pagination.onChange(4, 50));
    expect(h.calls.at(-1)).toMatchObject({ query: 'x', page: 1, pageSize: 50 });
    act(() => void h.current().reload());
    expect(h.calls.at(-1)).toMatchObject({ query: 'x', page: 1, pageSize: 50 });
    h.unmount();
  });
});
