import PagePlaceholder from '../../components/PagePlaceholder/index.tsx';

/** Playground: model chat with streaming replies (spec 02 section 2). */
export default function PlaygroundPage() {
  return <PagePlaceholder title="menu.playground" />;
}
