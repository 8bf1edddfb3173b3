import PagePlaceholder from '../../components/PagePlaceholder/index.tsx';

/** About page (public). */
export default function AboutPage() {
  return <PagePlaceholder title="route.about" />;
}
