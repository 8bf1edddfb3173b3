import { Menu } from '@arco-design/web-react';
import { useMemo } from 'react';
import { useLocation, useNavigate } from 'react-router-dom';
import MenuIcon from '../components/MenuIcon/index.tsx';
import { useT } from '../locale/index.tsx';
import { buildMenu, type MenuEntry, selectedMenuKey } from '../menu.ts';
import { useStatus } from '../store/status-context.tsx';
import { useUser } from '../store/user-context.tsx';

/** Indents submenu items so that their labels line up with the labels of iconed items. */
const MENU_LEVEL_INDENT = 32;

/** The side menu built from the route table for the current user and status. */
export default function SideMenu({ collapsed, onNavigate }: { collapsed: boolean; onNavigate?: () => void }) {
  const { user } = useUser();
  const { status } = useStatus();
  const t = useT();
  const navigate = useNavigate();
  const { pathname } = useLocation();

  const entries = useMemo(() => buildMenu({ user, status }), [user, status]);
  const paths = useMemo(() => {
    const map = new Map<string, string>();
    for (const entry of entries.flatMap((e) => [e, ...(e.children ?? [])])) {
      if (entry.path) map.set(entry.key, entry.path);
    }
    return map;
  }, [entries]);
  const selected = selectedMenuKey(pathname, entries);

  const label = (entry: MenuEntry) => entry.label ?? (entry.name ? t(entry.name) : entry.key);
  const title = (entry: MenuEntry) => (
    <>
      <MenuIcon name={entry.icon} className="aigw-menu-icon" />
      {label(entry)}
    </>
  );

  return (
    <Menu
      collapse={collapsed}
      selectedKeys={selected ? [selected] : []}
      defaultOpenKeys={entries.filter((e) => e.children).map((e) => e.key)}
      autoOpen
      levelIndent={MENU_LEVEL_INDENT}
      onClickMenuItem={(key) => {
        const path = paths.get(key);
        if (path) {
          navigate(path);
          onNavigate?.();
        }
      }}
      style={{ width: '100%' }}
    >
      {entries.map((entry) =>
        entry.children ? (
          <Menu.SubMenu key={entry.key} title={title(entry)}>
            {entry.children.map((child) => (
              <Menu.Item key={child.key}>{label(child)}</Menu.Item>
            ))}
          </Menu.SubMenu>
        ) : (
          <Menu.Item key={entry.key}>{title(entry)}</Menu.Item>
        ),
      )}
    </Menu>
  );
}
