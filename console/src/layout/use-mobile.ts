import { useEffect, useState } from 'react';
import { MOBILE_MAX_WIDTH } from '../menu.ts';

/** True while the window is 600 px wide or less. */
export function useIsMobile(): boolean {
  const [mobile, setMobile] = useState(() => window.innerWidth <= MOBILE_MAX_WIDTH);
  useEffect(() => {
    const onResize = () => setMobile(window.innerWidth <= MOBILE_MAX_WIDTH);
    window.addEventListener('resize', onResize);
    return () => window.removeEventListener('resize', onResize);
  }, []);
  return mobile;
}
