/**
 * The layout check of the screen walk (issue 14, item 7): on a page, no element sticks out of the
 * viewport sideways (unless a scrolling or clipping box holds it) and nothing covers an
 * interactive element. Runs in the page (page.evaluate(inspect)), one DOM walk per visit.
 */

/** The route table of spec 01/02 as root reaches it (OAuth and the external chat links left out). */
export const ROOT_ROUTES = [
  '/',
  '/about',
  '/pricing',
  '/playground',
  '/token',
  '/topup',
  '/log',
  '/detail',
  '/midjourney',
  '/task',
  '/channel',
  '/channel/add',
  '/channel/edit/1',
  '/redemption',
  '/user',
  '/user/edit/1',
  '/user/edit',
  '/setting',
  '/setting?tab=operation',
  '/setting?tab=system',
  '/setting?tab=other',
  '/no-such-page',
];

export interface Finding {
  kind: 'overflow' | 'covered';
  what: string;
  by?: string;
}

/** Runs in the page: elements out of the viewport sideways, and interactive elements covered. */
export function inspect(): Finding[] {
  const describe = (el: Element) => {
    const cls = typeof el.className === 'string' ? el.className.trim().split(/\s+/).slice(0, 2).join('.') : '';
    const text = (el as HTMLElement).innerText?.trim().slice(0, 24) ?? '';
    return `${el.tagName.toLowerCase()}${cls ? `.${cls}` : ''}${text ? ` "${text}"` : ''}`;
  };
  const visible = (el: Element) => {
    const s = getComputedStyle(el);
    return s.visibility !== 'hidden' && s.display !== 'none' && Number(s.opacity) > 0.05;
  };
  const vw = document.documentElement.clientWidth;
  const findings: Finding[] = [];

  // Sideways overflow: the page itself, then any element not held by a clipping box.
  if (document.documentElement.scrollWidth > vw + 1)
    findings.push({
      kind: 'overflow',
      what: `page scrolls sideways (${document.documentElement.scrollWidth} > ${vw})`,
    });
  const clipped = (el: Element) => {
    for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
      const o = getComputedStyle(p).overflowX;
      if (o !== 'visible') return true;
    }
    return false;
  };
  for (const el of document.body.querySelectorAll('*')) {
    const r = el.getBoundingClientRect();
    if (r.width < 1 || r.height < 1 || !visible(el)) continue;
    if ((r.right > vw + 1 || r.left < -1) && !clipped(el)) {
      // Report the outermost offender only.
      const parent = el.parentElement?.getBoundingClientRect();
      if (parent && (parent.right > vw + 1 || parent.left < -1) && !clipped(el.parentElement as Element)) continue;
      findings.push({ kind: 'overflow', what: `${describe(el)} spans ${Math.round(r.left)}..${Math.round(r.right)}` });
    }
  }

  // A point outside a clipping ancestor's box is not shown (e.g. a tab scrolled out of its strip).
  const outsideClip = (el: Element, x: number, y: number) => {
    for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
      if (getComputedStyle(p).overflowX === 'visible' && getComputedStyle(p).overflowY === 'visible') continue;
      const c = p.getBoundingClientRect();
      if (x < c.left || x > c.right || y < c.top || y > c.bottom) return true;
    }
    return false;
  };

  // Interactive elements: what is on top at their centre is themselves (or part of the same control).
  const CONTROL =
    '.arco-select-view, .arco-picker, .arco-input-inner-wrapper, .arco-input-group-wrapper, .arco-input-number, .arco-checkbox, .arco-radio, .arco-switch, .arco-slider, .arco-upload, .arco-input-tag, .arco-textarea-word-limit, .arco-btn-group, label';
  const interactive = document.querySelectorAll(
    'a[href], button, input:not([type="hidden"]), select, textarea, [role="button"], [role="switch"], [role="tab"], [role="menuitem"]',
  );
  for (const el of interactive) {
    const r = el.getBoundingClientRect();
    if (r.width < 4 || r.height < 4 || !visible(el)) continue;
    const x = r.left + r.width / 2;
    const y = r.top + r.height / 2;
    if (x < 0 || y < 0 || x > vw || y > window.innerHeight) continue;
    if (outsideClip(el, x, y)) continue;
    const hit = document.elementFromPoint(x, y);
    if (!hit || hit === el || el.contains(hit) || hit.contains(el)) continue;
    const control = el.closest(CONTROL);
    if (control && control === hit.closest(CONTROL)) continue;
    findings.push({ kind: 'covered', what: describe(el), by: describe(hit) });
  }
  return findings;
}
