// Refuses a Node.js older than Switchyard needs, in one line, before anything loads better-sqlite3
// (built for Node 22 and later, it crashes an older Node with a segmentation fault and no message).
// Plain JavaScript with no imports but node's own, so that it runs on any Node: `node
// bin/require-node.js` (the npm scripts run it first) or `requireNode()` (bin/switchyard.js).
import { pathToFileURL } from 'node:url';

/** The oldest Node.js major version Switchyard runs on (package.json `engines`). */
export const MIN_NODE_MAJOR = 22;

/** Why this Node cannot run Switchyard, in one line, or undefined when it can. */
export function nodeProblem(version = process.versions.node, execPath = process.execPath) {
  const major = Number(version.split('.')[0]);
  if (major >= MIN_NODE_MAJOR) return undefined;
  return (
    `switchyard needs Node.js ${MIN_NODE_MAJOR} or later, and this is Node.js v${version} (${execPath}): install Node.js 24, ` +
    'or run the same command through scripts/node24.sh, which brings Node 24 from the npm registry (scripts/node24.sh npm run demo)'
  );
}

/** Exits with code 1 and that line on stderr when this Node is too old. */
export function requireNode() {
  const problem = nodeProblem();
  if (problem === undefined) return;
  process.stderr.write(`${problem}\n`);
  process.exit(1);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) requireNode();
