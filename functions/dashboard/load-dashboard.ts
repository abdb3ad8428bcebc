import type { ApiDeps } from '../api/router.js';
import { dashboardAssets } from './dashboard-assets.js';

/**
 * The dashboard's files (the page, its script and styles), built into the generated module
 * `dashboard-assets.ts` by `npm run build:dashboard` (run by `npm ci`/`npm install` through
 * `prepare`, and by `npm test`). The import is static so the API function's bundle includes them.
 */
export async function loadDashboard(): Promise<ApiDeps['dashboard']> {
  return dashboardAssets;
}
