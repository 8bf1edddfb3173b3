import { useParams } from 'react-router-dom';
import PagePlaceholder from '../../components/PagePlaceholder/index.tsx';

/** Embeds the configured chat app /chat/{id} in a frame (to come). */
export default function ChatPage() {
  const { id = '0' } = useParams();
  return <PagePlaceholder key={id} title="menu.chat" />;
}
