import { Card, Empty, Tabs } from '@arco-design/web-react';
import { useSearchParams } from 'react-router-dom';
import { type LocaleKey, useT } from '../../locale/index.tsx';
import { useUser } from '../../store/user-context.tsx';

type TabKey = 'personal' | 'operation' | 'system' | 'other';

const tabs: { key: TabKey; title: LocaleKey; rootOnly: boolean }[] = [
  { key: 'personal', title: 'setting.personal', rootOnly: false },
  { key: 'operation', title: 'setting.operation', rootOnly: true },
  { key: 'system', title: 'setting.system', rootOnly: true },
  { key: 'other', title: 'setting.other', rootOnly: true },
];

/** /setting?tab=...: the personal tab for everyone, the other three for super admins only. */
export default function SettingPage() {
  const t = useT();
  const { isRoot } = useUser();
  const [params, setParams] = useSearchParams();
  const visible = tabs.filter((tab) => isRoot || !tab.rootOnly);
  const requested = params.get('tab');
  const active = visible.find((tab) => tab.key === requested)?.key ?? 'personal';
  return (
    <Card bordered={false} title={t('menu.setting')}>
      <Tabs activeTab={active} onChange={(key) => setParams({ tab: key }, { replace: true })}>
        {visible.map((tab) => (
          <Tabs.TabPane key={tab.key} title={t(tab.title)}>
            <Empty description={t('page.placeholder')} />
          </Tabs.TabPane>
        ))}
      </Tabs>
    </Card>
  );
}
