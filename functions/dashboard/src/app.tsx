import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { type AuthRequiredError, createApiClient } from './api-client.js';
import type { Credential } from './credentials.js';
import { Header } from './header.js';
import { ApiContext } from './hooks.js';
import { DEFAULT_NAMESPACE, namespacedHash, splitNamespace } from './namespace-route.js';
import { parseRoute, type Route } from './route.js';
import { forgetCredential, loadCredential, saveCredential } from './session-credential.js';
import { AuthPrompt } from './views/auth-prompt.js';
import { JobView } from './views/job-view.js';
import { JobsView } from './views/jobs-view.js';
import { NotFoundView } from './views/notes.js';
import { WorkflowView } from './views/workflow-view.js';
import { WorkflowsView } from './views/workflows-view.js';

/** The page: a header, and the view the URL's fragment names, or the credential prompt when the API wants one. */
export function App() {
  const [namespace, setNamespace] = useState(
    () => splitNamespace(location.hash).namespace ?? DEFAULT_NAMESPACE,
  );
  const [route, setRoute] = useState<Route>(() => parseRoute(splitNamespace(location.hash).hash));
  /** The namespaces the credential sees (`GET api/namespaces`); undefined until known. */
  const [namespaces, setNamespaces] = useState<string[]>();
  const namespaceRef = useRef(namespace);
  namespaceRef.current = namespace;
  const [credential, setCredential] = useState<Credential | undefined>(loadCredential);
  const [authRequest, setAuthRequest] = useState<AuthRequiredError>();
  // Bumped when the credential changes, so every view mounts afresh and fetches again.
  const [session, setSession] = useState(0);
  const credentialRef = useRef(credential);
  credentialRef.current = credential;

  useEffect(() => {
    const follow = () => {
      const split = splitNamespace(location.hash);
      if (split.namespace !== undefined) {
        namespaceRef.current = split.namespace;
        setNamespace(split.namespace);
      } else if (namespaceRef.current !== DEFAULT_NAMESPACE) {
        // A view's link names no namespace: it stays in the one shown, and the address says so.
        history.replaceState(null, '', namespacedHash(namespaceRef.current, split.hash));
      }
      setRoute(parseRoute(split.hash));
    };
    addEventListener('hashchange', follow);
    return () => removeEventListener('hashchange', follow);
  }, []);

  const client = useMemo(
    () =>
      createApiClient({
        credential: () => credentialRef.current,
        namespace: () => namespaceRef.current,
        onAuthRequired: (request) => setAuthRequest((previous) => previous ?? request),
      }),
    [],
  );

  // The namespaces this credential sees; a credential of one namespace is taken to it.
  useEffect(() => {
    let live = true;
    client.request<{ namespaces: string[] }>('api/namespaces').then(
      ({ namespaces: seen }) => {
        if (!live) return;
        setNamespaces(seen);
        const first = seen[0];
        if (first !== undefined && !seen.includes(namespaceRef.current))
          location.hash = namespacedHash(first, '#/');
      },
      () => live && setNamespaces(undefined),
    );
    return () => {
      live = false;
    };
  }, [client, session]);

  const applyCredential = (next: Credential | undefined) => {
    if (next) saveCredential(next);
    else forgetCredential();
    credentialRef.current = next;
    setCredential(next);
    setAuthRequest(undefined);
    setSession((n) => n + 1);
  };

  return (
    <>
      <Header
        route={route}
        credential={credential}
        onForget={() => applyCredential(undefined)}
        namespace={namespace}
        namespaces={namespaces}
        onNamespace={(next) => {
          location.hash = namespacedHash(next, '#/');
        }}
      />
      <main class="main">
        {authRequest ? (
          <AuthPrompt
            request={authRequest}
            onSubmit={(value) => applyCredential({ kind: authRequest.kind, value })}
          />
        ) : (
          <ApiContext.Provider value={client}>
            <View key={`${session}|${namespace}|${viewKey(route)}`} route={route} />
          </ApiContext.Provider>
        )}
      </main>
    </>
  );
}

/** Views keep their state while only their details change (a job's selected step). */
function viewKey(route: Route): string {
  switch (route.view) {
    case 'job':
      return `job:${route.id}`;
    case 'jobs':
      return `jobs:${route.workflow ?? ''}:${route.status}`;
    case 'workflow':
      return `workflow:${route.name}`;
    default:
      return route.view;
  }
}

function View({ route }: { route: Route }) {
  switch (route.view) {
    case 'workflows':
      return <WorkflowsView />;
    case 'workflow':
      return <WorkflowView name={route.name} />;
    case 'jobs':
      return <JobsView workflow={route.workflow} status={route.status} id={route.id} input={route.input} />;
    case 'job':
      return <JobView id={route.id} step={route.step} />;
    case 'not-found':
      return <NotFoundView hash={route.hash} />;
  }
}
