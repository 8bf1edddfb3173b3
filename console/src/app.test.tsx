// @vitest-environment happy-dom
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRoot, type Root } from 'react-dom/client';
import { createMemoryRouter } from 'react-router-dom';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { configureApi, type NoticeLevel } from './api/request.ts';
import type { Status, User } from './api/types.ts';
import App from './app.tsx';
import { LocaleProvider } from './locale/index.tsx';
import { buildRouteObjects } from './router.tsx';

const status: Status = {
  system_name: '测试网关',
  logo: '/custom-logo.png',
  enable_drawing: true,
  enable_task: false,
  enable_data_export: false,
  chats: [{ Alpha: 'https://a' }, { Beta: 'https://b' }],
  footer_html: '<b>自定义页脚</b>',
  top_up_link: 'https://shop',
};

/** A real server standing in for the gateway's GET /api/status. */
function startStatusServer(): Promise<Server> {
  const server = createServer((req, res) => {
    res.setHeader('Access-Control-Allow-Origin', req.headers.origin ?? '*');
    res.setHeader('Access-Control-Allow-Credentials', 'true');
    res.setHeader('Access-Control-Allow-Headers', 'New-Api-User, Content-Type');
    if (req.method === 'OPTIONS') {
      res.writeHead(204);
      res.end();
      return;
    }
    // User 7's session has expired: everything but the public status answers 401.
    if (req.headers['new-api-user'] === '7' && !req.url?.startsWith('/api/status')) {
      res.writeHead(401, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ success: false, message: '无权进行此操作，未登录且未提供 access token' }));
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ success: true, message: '', data: status }));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function waitFor(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 4000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; page: ${document.body.textContent}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('application shell', () => {
  let server: Server;
  let root: Root | undefined;
  const notices: { level: NoticeLevel; text: string }[] = [];

  const mount = (path: string, user?: User) => {
    if (user) localStorage.setItem('user', JSON.stringify(user));
    const router = createMemoryRouter(buildRouteObjects(), { initialEntries: [path] });
    const container = document.createElement('div');
    document.body.append(container);
    root = createRoot(container);
    root.render(
      <LocaleProvider>
        <App router={router} />
      </LocaleProvider>,
    );
    return { router, container };
  };
  const menuText = (container: HTMLElement) => container.querySelector('.arco-menu')?.textContent ?? '';

  beforeAll(async () => {
    server = await startStatusServer();
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    localStorage.clear();
    notices.length = 0;
    const { port } = server.address() as AddressInfo;
    configureApi({ baseUrl: `http://127.0.0.1:${port}`, notify: (level, text) => notices.push({ level, text }) });
  });
  afterEach(() => {
    root?.unmount();
    document.body.innerHTML = '';
  });

  it('when nobody is logged in and a guarded page is opened, then the login page shows', async () => {
    const { router, container } = mount('/token');
    await waitFor(() => router.state.location.pathname === '/login', 'redirect to /login');
    await waitFor(() => container.textContent?.includes('用户登录') ?? false, 'login form');
    expect(container.textContent).toContain('注册');
  });

  it('when a logged-in page gets 401, then the browser lands on /login?expired=true and the login page says the login expired', async () => {
    const { router, container } = mount('/token', { id: 7, username: 'eve', role: 1 });
    configureApi({ onUnauthorized: (path) => void router.navigate(path, { replace: true }) });
    await waitFor(() => router.state.location.pathname === '/login', 'redirect to /login');
    expect(`${router.state.location.pathname}${router.state.location.search}`).toBe('/login?expired=true');
    await waitFor(() => container.textContent?.includes('用户登录') ?? false, 'login form');
    await waitFor(
      () => document.body.textContent?.includes('未登录或登录已过期，请重新登录！') ?? false,
      'the expired-login message',
    );
    expect(localStorage.getItem('user')).toBeNull();
  });

  it('when the status arrives, then it is stored, branded and drives the menu and footer', async () => {
    const { container } = mount('/token', { id: 2, username: 'bob', role: 1 });
    await waitFor(() => container.textContent?.includes('自定义页脚') ?? false, 'status footer');
    expect(JSON.parse(localStorage.getItem('status') ?? '{}')).toMatchObject({ system_name: '测试网关' });
    expect(localStorage.getItem('top_up_link')).toBe('https://shop');
    expect(localStorage.getItem('enable_drawing')).toBe('true');
    expect(JSON.parse(localStorage.getItem('chats') ?? '[]')).toHaveLength(2);
    expect(document.title).toBe('测试网关');
    expect(document.querySelector<HTMLLinkElement>('link[rel~="icon"]')?.getAttribute('href')).toBe('/custom-logo.png');
    const menu = menuText(container);
    for (const label of ['Playground', '模型价格', '聊天', '令牌', '钱包', '日志', '绘图', '设置'])
      expect(menu).toContain(label);
    for (const label of ['渠道', '兑换码', '用户管理', '数据看板', '异步任务']) expect(menu).not.toContain(label);
    expect(container.querySelector('.aigw-navbar')?.textContent).toContain('bob');
  });

  it('when an ordinary user opens an admin page, then 无权进行此操作 shows', async () => {
    const { container } = mount('/channel', { id: 2, username: 'bob', role: 1 });
    await waitFor(() => container.textContent?.includes('无权进行此操作') ?? false, 'forbidden result');
  });

  it('when an admin opens the channel page, then its card and the admin menu show', async () => {
    const { container } = mount('/channel', { id: 1, username: 'root', role: 100 });
    await waitFor(() => container.textContent?.includes('管理渠道') ?? false, 'channel page');
    await waitFor(() => menuText(container).includes('用户管理'), 'admin menu');
    expect(menuText(container)).toContain('渠道');
    expect(menuText(container)).toContain('兑换码');
  });

  it('when the path is unknown, then 页面不存在 shows', async () => {
    const { container } = mount('/no/such/page');
    await waitFor(() => container.textContent?.includes('页面不存在') ?? false, 'not-found page');
  });

  it('when the status cannot be loaded, then 无法正常连接至服务器！ is shown', async () => {
    configureApi({ baseUrl: 'http://127.0.0.1:1' });
    mount('/');
    await waitFor(() => notices.length > 0, 'a notice');
    expect(notices).toEqual([{ level: 'error', text: '无法正常连接至服务器！' }]);
  });
});
