import { Card, Empty, Spin } from '@arco-design/web-react';
import { useEffect, useState } from 'react';
import { getAbout } from '../../api/status.ts';
import RichContent from '../../components/RichContent/index.tsx';
import { useT } from '../../locale/index.tsx';
import { frameUrl } from '../../utils/rich-content.ts';

/** /about (public): the About setting as Markdown/HTML, or the page at its URL in a frame. */
export default function AboutPage() {
  const t = useT();
  const [about, setAbout] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    void getAbout().then((res) => {
      if (live) setAbout(res.success && typeof res.data === 'string' ? res.data : '');
    });
    return () => {
      live = false;
    };
  }, []);

  if (about === null) return <Spin className="aigw-page-loading" />;
  if (frameUrl(about)) return <RichContent content={about} title={t('route.about')} />;
  return (
    <Card bordered={false} title={t('route.about')}>
      {about.trim() ? (
        <RichContent content={about} title={t('route.about')} />
      ) : (
        <Empty description={t('about.empty')} />
      )}
    </Card>
  );
}
