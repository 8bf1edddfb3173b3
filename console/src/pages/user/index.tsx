import PagePlaceholder from '../../components/PagePlaceholder/index.tsx';

/** User administration (admin only). */
export default function UserPage() {
  return <PagePlaceholder title="page.user.title" />;
}
