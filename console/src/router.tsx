import { type ComponentType, type LazyExoticComponent, lazy } from 'react';
import type { RouteObject } from 'react-router-dom';
import RequireLogin from './components/RequireLogin/index.tsx';
import RequireRole from './components/RequireRole/index.tsx';
import PageLayout from './layout/index.tsx';
import { type AppRoute, routes } from './routes.ts';

type PageModule = { default: ComponentType };

/** Every page folder, loaded on demand: pages/<kebab-page>/index.tsx. */
const pageModules = import.meta.glob<PageModule>('./pages/*/index.tsx');
const pageCache = new Map<string, LazyExoticComponent<ComponentType>>();

function pageComponent(page: string): LazyExoticComponent<ComponentType> {
  const cached = pageCache.get(page);
  if (cached) return cached;
  const load = pageModules[`./pages/${page}/index.tsx`];
  if (!load) throw new Error(`missing page folder src/pages/${page}`);
  const component = lazy(load);
  pageCache.set(page, component);
  return component;
}

/** Wraps the page in the guards its table row asks for. */
function routeElement(route: AppRoute) {
  const Page = pageComponent(route.page);
  let element = <Page />;
  if (route.role !== undefined) element = <RequireRole role={route.role}>{element}</RequireRole>;
  if (route.requireLogin) element = <RequireLogin>{element}</RequireLogin>;
  return element;
}

/** react-router routes generated from the route table, all inside the application shell. */
export function buildRouteObjects(): RouteObject[] {
  return [
    { element: <PageLayout />, children: routes.map((route) => ({ path: route.path, element: routeElement(route) })) },
  ];
}
