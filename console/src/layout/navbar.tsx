import { Avatar, Button, Dropdown, Menu, Message, Tooltip } from '@arco-design/web-react';
import {
  IconLanguage,
  IconMenuFold,
  IconMenuUnfold,
  IconMoon,
  IconPoweroff,
  IconSun,
} from '@arco-design/web-react/icon';
import { useState } from 'react';
import { Link, useNavigate } from 'react-router-dom';
import { logout } from '../api/user.ts';
import { type Lang, useLocale } from '../locale/index.tsx';
import { useStatus } from '../store/status-context.tsx';
import { useUser } from '../store/user-context.tsx';
import { isFestiveDay } from './festive.ts';
import { setTheme, storedTheme, type Theme } from './theme.ts';

interface NavbarProps {
  mobile: boolean;
  collapsed: boolean;
  onToggleCollapse: () => void;
}

const languages: { key: Lang; label: string }[] = [
  { key: 'zh-CN', label: '简体中文' },
  { key: 'en-US', label: 'English' },
];

/** Top bar: logo, system name, home/about links, festive item, language, theme and the user menu. */
export default function Navbar({ mobile, collapsed, onToggleCollapse }: NavbarProps) {
  const { t, lang, setLang } = useLocale();
  const { status } = useStatus();
  const { user, clearUser } = useUser();
  const navigate = useNavigate();
  const [theme, setThemeState] = useState<Theme>(storedTheme);

  const toggleTheme = () => {
    const next: Theme = theme === 'dark' ? 'light' : 'dark';
    setTheme(next);
    setThemeState(next);
  };

  const onLogout = async () => {
    await logout();
    clearUser();
    Message.success(t('nav.logoutSuccess'));
    navigate('/login');
  };

  const systemName = status.system_name || t('app.name');
  const userMenu = (
    <Menu onClickMenuItem={(key) => key === 'logout' && void onLogout()}>
      <Menu.Item key="logout">
        <IconPoweroff className="aigw-dropdown-icon" />
        {t('nav.logout')}
      </Menu.Item>
    </Menu>
  );
  const festiveMenu = (
    <Menu onClickMenuItem={() => Message.success({ content: t('nav.festiveGreeting'), duration: 4000 })}>
      <Menu.Item key="greeting">{t('nav.festive')}</Menu.Item>
    </Menu>
  );
  const languageMenu = (
    <Menu selectedKeys={[lang]} onClickMenuItem={(key) => setLang(key as Lang)}>
      {languages.map((item) => (
        <Menu.Item key={item.key}>{item.label}</Menu.Item>
      ))}
    </Menu>
  );

  return (
    <div className="aigw-navbar">
      <div className="aigw-navbar-left">
        {mobile && (
          <Button
            className="aigw-navbar-toggle"
            shape="circle"
            type="text"
            aria-label={collapsed ? t('nav.expand') : t('nav.collapse')}
            icon={collapsed ? <IconMenuUnfold /> : <IconMenuFold />}
            onClick={onToggleCollapse}
          />
        )}
        <Link to="/" className="aigw-logo">
          <img src={status.logo || '/logo.svg'} alt="" />
          {!mobile && <span className="aigw-logo-name">{systemName}</span>}
        </Link>
        <nav className="aigw-navbar-links">
          <Link to="/">{t('nav.home')}</Link>
          <Link to="/about">{t('nav.about')}</Link>
        </nav>
      </div>
      <ul className="aigw-navbar-right">
        {isFestiveDay(new Date()) && (
          <li>
            <Dropdown droplist={festiveMenu} position="br">
              <Button shape="circle" type="text" aria-label={t('nav.festive')}>
                🏮
              </Button>
            </Dropdown>
          </li>
        )}
        <li>
          <Dropdown droplist={languageMenu} position="br">
            <Button shape="circle" type="secondary" aria-label={t('nav.language')} icon={<IconLanguage />} />
          </Dropdown>
        </li>
        {!mobile && (
          <li>
            <Tooltip content={theme === 'dark' ? t('nav.toLight') : t('nav.toDark')}>
              <Button
                shape="circle"
                type="secondary"
                aria-label={theme === 'dark' ? t('nav.toLight') : t('nav.toDark')}
                icon={theme === 'dark' ? <IconSun /> : <IconMoon />}
                onClick={toggleTheme}
              />
            </Tooltip>
          </li>
        )}
        {user ? (
          <li>
            <Dropdown droplist={userMenu} position="br">
              <span className="aigw-user">
                <Avatar size={32} style={{ backgroundColor: 'rgb(var(--arcoblue-6))' }}>
                  {(user.display_name || user.username || '?').slice(0, 1).toUpperCase()}
                </Avatar>
                {!mobile && <span className="aigw-user-name">{user.display_name || user.username}</span>}
              </span>
            </Dropdown>
          </li>
        ) : (
          <>
            <li>
              <Link to="/login">
                <Button type="text">{t('nav.login')}</Button>
              </Link>
            </li>
            <li>
              <Link to="/register">
                <Button type="primary">{t('nav.register')}</Button>
              </Link>
            </li>
          </>
        )}
      </ul>
    </div>
  );
}
