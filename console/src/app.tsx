import { ConfigProvider } from '@arco-design/web-react';
import enUS from '@arco-design/web-react/es/locale/en-US';
import zhCN from '@arco-design/web-react/es/locale/zh-CN';
import type { createBrowserRouter } from 'react-router-dom';
import { RouterProvider } from 'react-router-dom';
import { useLocale } from './locale/index.tsx';
import { StatusProvider } from './store/status-context.tsx';
import { UserProvider } from './store/user-context.tsx';

type AppRouter = ReturnType<typeof createBrowserRouter>;

/** The console: Arco locale, user and status contexts around the router. Needs a LocaleProvider above. */
export default function App({ router }: { router: AppRouter }) {
  const { lang } = useLocale();
  return (
    <ConfigProvider locale={lang === 'en-US' ? enUS : zhCN}>
      <UserProvider>
        <StatusProvider>
          {/* Remounted on a language change so that labels computed outside components (tr) follow it. */}
          <RouterProvider key={lang} router={router} />
        </StatusProvider>
      </UserProvider>
    </ConfigProvider>
  );
}
