import { Card, Empty } from '@arco-design/web-react';
import type { ReactNode } from 'react';
import { type LocaleKey, useT } from '../../locale/index.tsx';

/** A titled card for pages still to be built. */
export default function PagePlaceholder({ title, children }: { title: LocaleKey; children?: ReactNode }) {
  const t = useT();
  return (
    <Card title={t(title)} bordered={false}>
      {children ?? <Empty description={t('page.placeholder')} />}
    </Card>
  );
}
