import PagePlaceholder from '../../components/PagePlaceholder/index.tsx';

/** Async tasks (shown when enable_task). */
export default function TaskPage() {
  return <PagePlaceholder title="menu.task" />;
}
