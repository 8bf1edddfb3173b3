import { useParams } from 'react-router-dom';
import PagePlaceholder from '../../components/PagePlaceholder/index.tsx';

/** User editor: /user/edit/{id} for admins, /user/edit for one's own profile. */
export default function UserEditPage() {
  const { id } = useParams();
  return <PagePlaceholder title={id ? 'route.userEdit' : 'route.userEditSelf'} />;
}
