import { Card } from '@arco-design/web-react';
import { useNavigate, useParams } from 'react-router-dom';
import { useT } from '../../locale/index.tsx';
import ChannelForm from '../channel/channel-form.tsx';
import '../channel/style/index.css';

/** Channel editor as a page: /channel/add creates, /channel/edit/{id} edits; both return to /channel. */
export default function ChannelEditPage() {
  const { id } = useParams();
  const t = useT();
  const navigate = useNavigate();
  const channelId = id ? Number(id) : undefined;
  return (
    <Card bordered={false} title={t(channelId ? 'route.channelEdit' : 'route.channelAdd')} style={{ maxWidth: 760 }}>
      <ChannelForm id={channelId} onDone={() => navigate('/channel')} />
    </Card>
  );
}
