import { useParams } from 'react-router-dom';
import PagePlaceholder from '../../components/PagePlaceholder/index.tsx';

/** Channel editor: /channel/add creates, /channel/edit/{id} edits. */
export default function ChannelEditPage() {
  const { id } = useParams();
  return <PagePlaceholder title={id ? 'route.channelEdit' : 'route.channelAdd'} />;
}
