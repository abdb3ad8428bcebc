import { type Credential, parseCredential } from './credentials.js';

const KEY = 'switchyard.credential';

/** The credential lives in session storage: it is gone when the tab closes. */
export function loadCredential(): Credential | undefined {
  try {
    return parseCredential(sessionStorage.getItem(KEY));
  } catch {
    return undefined;
  }
}

export function saveCredential(credential: Credential): void {
  sessionStorage.setItem(KEY, JSON.stringify(credential));
}

export function forgetCredential(): void {
  sessionStorage.removeItem(KEY);
}
