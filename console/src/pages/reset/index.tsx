import PagePlaceholder from '../../components/PagePlaceholder/index.tsx';

/** Password-reset mail request. */
export default function ResetPage() {
  return <PagePlaceholder title="route.reset" />;
}
