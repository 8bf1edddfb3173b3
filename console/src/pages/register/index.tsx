import PagePlaceholder from '../../components/PagePlaceholder/index.tsx';

/** Registration form. */
export default function RegisterPage() {
  return <PagePlaceholder title="route.register" />;
}
