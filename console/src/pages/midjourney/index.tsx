import PagePlaceholder from '../../components/PagePlaceholder/index.tsx';

/** Drawing tasks (shown when enable_drawing). */
export default function MidjourneyPage() {
  return <PagePlaceholder title="menu.midjourney" />;
}
