import type { Credential } from './credentials.js';
import type { Route } from './route.js';

/** The bar on every page: the name, the two main views, the namespace shown, and the credential in use. */
export function Header({
  route,
  credential,
  onForget,
  namespace,
  namespaces,
  onNamespace,
}: {
  route: Route;
  credential?: Credential;
  onForget(): void;
  namespace: string;
  /** The namespaces the credential sees; the picker shows when there is a choice, or another than default. */
  namespaces?: string[];
  onNamespace(namespace: string): void;
}) {
  const choices = namespaces?.includes(namespace) ? namespaces : [...(namespaces ?? []), namespace];
  const current = route.view === 'job' ? 'jobs' : route.view === 'workflow' ? 'workflows' : route.view;
  return (
    <header class="top">
      <div class="top-inner">
        <a class="brand" href="#/">
          <svg viewBox="0 0 24 24" width="24" height="24" aria-hidden="true" class="brand-mark">
            <path d="M4 19 L4 5 M4 12 C 10 12, 12 6, 20 6 M4 12 L20 12 M4 12 C 10 12, 12 18, 20 18" />
            <circle cx="20" cy="6" r="2" />
            <circle cx="20" cy="12" r="2" />
            <circle cx="20" cy="18" r="2" />
          </svg>
          Switchyard
        </a>
        <nav class="top-nav" aria-label="Views">
          <a href="#/" aria-current={current === 'workflows' ? 'page' : undefined}>
            Workflows
          </a>
          <a href="#/jobs" aria-current={current === 'jobs' ? 'page' : undefined}>
            Jobs
          </a>
        </nav>
        {(choices.length > 1 || namespace !== 'default') && (
          <label class="top-namespace">
            <span class="muted">Namespace</span>
            <select
              aria-label="Namespace"
              value={namespace}
              onChange={(event) => onNamespace((event.target as HTMLSelectElement).value)}
            >
              {choices.map((name) => (
                <option key={name} value={name}>
                  {name}
                </option>
              ))}
            </select>
          </label>
        )}
        {credential && (
          <div class="top-credential">
            <span class="muted">{credential.kind === 'token' ? 'Token' : 'API key'} set</span>
            <button type="button" class="button-ghost button-small" onClick={onForget}>
              Forget
            </button>
          </div>
        )}
      </div>
    </header>
  );
}
