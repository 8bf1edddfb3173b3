import PagePlaceholder from '../../components/PagePlaceholder/index.tsx';

/** Token list and editor. */
export default function TokenPage() {
  return <PagePlaceholder title="menu.token" />;
}
