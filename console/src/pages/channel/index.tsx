import PagePlaceholder from '../../components/PagePlaceholder/index.tsx';

/** Channel administration (admin only). */
export default function ChannelPage() {
  return <PagePlaceholder title="page.channel.title" />;
}
