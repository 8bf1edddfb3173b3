import PagePlaceholder from '../../components/PagePlaceholder/index.tsx';

/** Password-reset confirmation (email and token from the query). */
export default function UserResetPage() {
  return <PagePlaceholder title="route.userReset" />;
}
