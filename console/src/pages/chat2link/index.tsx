import PagePlaceholder from '../../components/PagePlaceholder/index.tsx';

/** Redirects to the chat link with the first enabled token. */
export default function Chat2LinkPage() {
  return <PagePlaceholder title="route.chat2link" />;
}
