import { Layout, Spin } from '@arco-design/web-react';
import { IconMenuFold, IconMenuUnfold } from '@arco-design/web-react/icon';
import { Suspense, useEffect, useState } from 'react';
import { Outlet } from 'react-router-dom';
import NoticeDialog from '../components/NoticeDialog/index.tsx';
import { useT } from '../locale/index.tsx';
import { defaultCollapsed } from '../menu.ts';
import { useStatus } from '../store/status-context.tsx';
import Footer from './footer.tsx';
import Navbar from './navbar.tsx';
import SideMenu from './side-menu.tsx';
import { useIsMobile } from './use-mobile.ts';
import './style/index.css';

const SIDER_WIDTH = 220;
const SIDER_COLLAPSED_WIDTH = 48;

/** The application shell: fixed top bar, collapsible side menu, page content and footer. */
export default function PageLayout() {
  const { status, loaded } = useStatus();
  const mobile = useIsMobile();
  const t = useT();
  const [collapsed, setCollapsed] = useState(() => defaultCollapsed(window.innerWidth, status));

  // The admin's default_collapse_sidebar is known only once the status answered.
  useEffect(() => {
    if (loaded) setCollapsed(defaultCollapsed(window.innerWidth, status));
  }, [loaded, status]);
  useEffect(() => {
    if (mobile) setCollapsed(true);
  }, [mobile]);

  // On mobile the opened menu overlays the content instead of pushing it aside.
  const siderWidth = collapsed || mobile ? SIDER_COLLAPSED_WIDTH : SIDER_WIDTH;
  const toggle = () => setCollapsed((value) => !value);

  return (
    <Layout className="aigw-layout">
      <div className="aigw-layout-navbar">
        <Navbar mobile={mobile} collapsed={collapsed} onToggleCollapse={toggle} />
      </div>
      <Layout>
        <Layout.Sider
          className="aigw-layout-sider"
          width={SIDER_WIDTH}
          collapsedWidth={SIDER_COLLAPSED_WIDTH}
          collapsed={collapsed}
          collapsible
          trigger={null}
        >
          <div className="aigw-menu-wrapper">
            <SideMenu collapsed={collapsed} onNavigate={mobile ? () => setCollapsed(true) : undefined} />
          </div>
          {!mobile && (
            <button
              type="button"
              className="aigw-collapse-btn"
              aria-label={collapsed ? t('nav.expand') : t('nav.collapse')}
              onClick={toggle}
            >
              {collapsed ? <IconMenuUnfold /> : <IconMenuFold />}
            </button>
          )}
        </Layout.Sider>
        <Layout className="aigw-layout-content" style={{ paddingLeft: siderWidth }}>
          <Layout.Content className="aigw-layout-content-wrapper">
            <Suspense fallback={<Spin className="aigw-page-loading" tip={t('app.loading')} />}>
              <Outlet />
            </Suspense>
          </Layout.Content>
          <Footer />
        </Layout>
      </Layout>
      <NoticeDialog />
    </Layout>
  );
}
