import '@arco-design/web-react/dist/css/arco.css';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { createBrowserRouter } from 'react-router-dom';
import { configureApi } from './api/request.ts';
import { arcoNotify } from './api/toast.ts';
import App from './app.tsx';
import { applyTheme, storedTheme } from './layout/theme.ts';
import { LocaleProvider } from './locale/index.tsx';
import { buildRouteObjects } from './router.tsx';

const router = createBrowserRouter(buildRouteObjects());

applyTheme(storedTheme());
configureApi({
  notify: arcoNotify,
  // A 401 has already cleared the stored user; send the browser to /login?expired=true.
  onUnauthorized: (path) => void router.navigate(path, { replace: true }),
});

const container = document.getElementById('root');
if (!container) throw new Error('index.html lacks #root');
createRoot(container).render(
  <StrictMode>
    <LocaleProvider>
      <App router={router} />
    </LocaleProvider>
  </StrictMode>,
);
