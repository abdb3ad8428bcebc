import { readFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import { DEFAULT_REPLY_QUEUE } from '../../engine/index.js';
import { CliError, DEFAULT_URL } from './client.js';
import { DEFAULT_ARCHIVE_DIR, listArchiveFiles, showArchivedJob } from './commands/archive.js';
import { graph, push, validate } from './commands/definitions.js';
import { deliveries } from './commands/deliveries.js';
import { history } from './commands/history.js';
import { command, rerun, status, submit, watch } from './commands/jobs.js';
import { describeWorkflow, listJobs, listQueues, listWorkflows } from './commands/listings.js';
import { listNamespaces, setNamespace, showNamespace } from './commands/namespaces.js';
import { listSchedules } from './commands/schedules.js';
import { batchCommand } from './commands/search.js';
import { serve } from './commands/serve.js';
import { createToken, listTokens, revokeToken } from './commands/tokens.js';

const out = (line: string) => process.stdout.write(`${line}\n`);
const urlOption = () =>
  new Option('--url <url>', `the switchyard API (default: $SWITCHYARD_URL, then ${DEFAULT_URL})`);

const namespaceOption = () =>
  new Option(
    '-n, --namespace <namespace>',
    'the namespace workflows and jobs are named in (default: $SWITCHYARD_NAMESPACE, then default)',
  );

const outputOption = () =>
  new Option('-o, --output <format>', 'json, or table for people')
    .choices(['json', 'table'])
    .default('table');

/** `cancel`/`retry` ID, or `--filter SEARCH` (not both: one job, or the jobs a search finds). */
async function byIdOrFilter(
  verb: 'cancel' | 'retry',
  id: string | undefined,
  options: { filter?: string; dryRun?: boolean; namespace?: string; url?: string },
): Promise<void> {
  if (options.filter !== undefined) {
    if (id !== undefined) throw new CliError(`${verb}: give a job id or --filter, not both`);
    return batchCommand(verb, options.filter, options, out);
  }
  if (id === undefined) throw new CliError(`${verb}: give a job id, or --filter with a search`);
  if (options.dryRun) throw new CliError(`${verb}: --dry-run goes with --filter`);
  return command(verb, id, options, out);
}

/** The package's version: package.json is two folders up from functions/cli/ and from dist/cli/ alike. */
function packageVersion(): string {
  try {
    return (
      JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
    ).version;
  } catch {
    return 'unknown';
  }
}

const program = new Command()
  .name('switchyard')
  .description('A workflow manager for queue-driven microservices.')
  .version(packageVersion(), '-V, --version', 'print the version')
  // Program options before the command only: `submit --version 2` is the workflow's version.
  .enablePositionalOptions()
  .showHelpAfterError('(add --help for usage)');

program
  .command('serve')
  .description(
    'run the local manager: HTTP API, dashboard, reply consumer and timers, on SQLite and RabbitMQ',
  )
  .option(
    '--config <file...>',
    'workflow files to register on start, each only when its definition changed since the last start',
  )
  .option('--db <path>', 'the SQLite database (":memory:" for none)', 'switchyard.db')
  .option(
    '--amqp <url>',
    'RabbitMQ (default: $AMQP_URL, then $AMQP_SERVER, then amqp://guest:guest@127.0.0.1:5672)',
  )
  .option('--bus <bus>', 'rabbitmq, or memory for a try-out with no broker', 'rabbitmq')
  .option('--reply-queue <name>', 'the queue workers reply to', DEFAULT_REPLY_QUEUE)
  .option('--port <port>', 'HTTP port', '8080')
  .option('--host <host>', 'HTTP address to bind', '127.0.0.1')
  .option(
    '--health-port <port>',
    'also answer /healthz, and only it, on this port of --host, with connections of its own: a flood holding every connection of --port does not reach it (0 picks a free port)',
  )
  .option(
    '--max-connections <n>',
    'HTTP connections held at once; more are closed as soon as they are accepted (default 1000)',
  )
  .option(
    '--headers-timeout <duration>',
    "a connection must have sent its request's headers this long after opening, or after its request began (default 10s)",
  )
  .option(
    '--request-timeout <duration>',
    'a request, headers and body, must have arrived this long after it began (default 30s); a long poll waiting for its answer is not cut',
  )
  .option(
    '--keep-alive-timeout <duration>',
    'a kept-alive connection is closed after this long without a next request (default 5s)',
  )
  .option('--retain <duration>', 'delete finished jobs older than this, e.g. 7d, archiving them first')
  .option(
    '--archive-dir <dir>',
    'where --retain archives finished jobs before deleting them: JSON Lines, one file a day (default switchyard-archive)',
  )
  .option('--no-archive', 'with --retain: delete finished jobs without archiving them')
  .option(
    '--secrets-file <file>',
    'a JSON file of secret names to values: params { key: { secret: NAME } } get the value as each request is sent, and no job, store or log keeps it',
  )
  .option(
    '--secrets-env-prefix <prefix>',
    'secrets from the environment: PREFIX + the name in capitals, other characters as _ (payments/api-key: PREFIXPAYMENTS_API_KEY)',
  )
  .option(
    '--notify-url <url>',
    'post the events of --notify-events of every job whose workflow has no notify: of its own to this URL, signed with --notify-secret (docs/notifications.md)',
  )
  .option(
    '--notify-events <events>',
    'with --notify-url: the events, comma-separated (job.completed,job.failed,job.cancelled,job.aborted by default)',
  )
  .option(
    '--notify-secret <name>',
    'with --notify-url: the name of the secret (--secrets-file or --secrets-env-prefix) that signs each delivery',
  )
  .option(
    '--notify-allow-host <host...>',
    'hosts webhook deliveries may go to (a name, or *.example.com); by default any host',
  )
  .option(
    '--token <token>',
    'the root token, admin of every namespace: require "Authorization: Bearer <token>" or a scoped token (default: $SWITCHYARD_TOKEN)',
  )
  .option(
    '--namespace <namespace>',
    "the namespace the --config files' workflows go to, unless a file names its own (namespace:) (default: default)",
  )
  .option(
    '--queue-prefix <prefix>',
    "put this before each step queue name of the --config files' workflows, unless a file sets its own (queuePrefix:)",
  )
  .option(
    '--allow-host <name...>',
    'answer requests for these host names too, besides localhost, loopback addresses and the bound address (default: $SWITCHYARD_ALLOW_HOST, comma-separated)',
  )
  .option(
    '--allow-origin <origin...>',
    "accept browser requests from pages of these origins too, besides serve's own, e.g. https://switchyard.example (default: $SWITCHYARD_ALLOW_ORIGIN, comma-separated)",
  )
  .option('--max-fan-out <n>', 'the longest list a fan-out step accepts (default 100000)')
  .option(
    '--max-fan-out-bytes <bytes>',
    "the most input one fan-out may give its children together: the step's input is copied to each (default 268435456)",
  )
  .option(
    '--max-tree-jobs <n>',
    'the most jobs one started job may make under it: fan-out children and called jobs, at any depth (default 1000000)',
  )
  .option(
    '--fan-out-slice <n>',
    'children a fan-out creates per transition: the most a transition holds in memory (default 10000)',
  )
  .option('--max-body <bytes>', 'the largest request body the API accepts (default 262144)')
  .option(
    '--max-reply <bytes>',
    "the largest worker reply taken, and the largest request sent to a worker: a step's larger input fails it (default 1048576)",
  )
  .option(
    '--request-ttl <duration>',
    'how long a request may stay in RabbitMQ, however often workers hand it back, e.g. 1h (the default); one still awaited then is sent again',
  )
  .option(
    '--quorum-queues',
    'declare new step queues as quorum queues that deliver a request at most --max-deliveries times (workers declaring their queue with no arguments are then refused)',
  )
  .option(
    '--max-deliveries <n>',
    'with --quorum-queues: deliveries of a request before its attempt fails (default 5)',
  )
  .option(
    '--reply-auth',
    "take only replies that echo their request's token (x-switchyard-token): for a broker others can publish on; the original's workers do not echo it",
  )
  .option(
    '--synchronous <level>',
    "SQLite's synchronous level: FULL (default) syncs every commit to disk; NORMAL survives a crash of serve but may lose the last commits if the machine loses power",
    'FULL',
  )
  .option(
    '--log-format <format>',
    'pretty (readable lines; the default on a terminal) or json (one object a line; the default otherwise)',
  )
  .action(async (options) => serve(options));

program
  .command('validate')
  .description('check workflow files: exit 0 when valid, else print each error and exit 1')
  .argument('<file...>', 'workflow files (YAML or JSON)')
  .action(async (files: string[]) => {
    process.exitCode = await validate(files, out);
  });

program
  .command('graph')
  .description("print a workflow's DAG, tasks included")
  .argument('<file>', 'a workflow file')
  .option('--workflow <name>', 'only this workflow')
  .option('--format <format>', 'mermaid or dot', 'mermaid')
  .action(async (file: string, options) => {
    process.stdout.write(await graph(file, options));
  });

program
  .command('push')
  .description("register a file's workflows with the manager (each as a new version when it changed)")
  .argument('<file>', 'a workflow file')
  .addOption(namespaceOption())
  .addOption(urlOption())
  .action(async (file: string, options) => push(file, options, out));

program
  .command('submit')
  .description(
    'start a job: its id and dashboard link go to stderr at once; then, on a terminal, its live progress until it ends; elsewhere the id on stdout (with --wait: its result)',
  )
  .argument('<workflow>', 'the workflow name')
  .option('--input <json>', 'the job input: JSON, or @file.json', '{}')
  .option('--id <uuid>', 'the job id (starting the same id again is idempotent)')
  .option('--version <n>', 'run this version of the workflow')
  .option('--wait', 'wait for the job to end and print its result; exit 1 if it failed')
  .option('--detach', 'on a terminal too, print the id and return at once (no live view)')
  .addOption(namespaceOption())
  .option(
    '--at <time>',
    'start later: an RFC 3339 time such as 2026-12-01T06:00:00Z (the job is scheduled until then; the id is printed at once)',
  )
  .addOption(urlOption())
  .action(async (name: string, options) => {
    process.exitCode = await submit(name, options, out);
  });

program
  .command('schedules')
  .description(
    "list the workflows' cron schedules with their next ticks, and their scheduled jobs (submit --at)",
  )
  .argument('[workflow]', 'only this workflow')
  .option('--ticks <n>', 'next ticks shown per schedule', '3')
  .addOption(outputOption())
  .addOption(namespaceOption())
  .addOption(urlOption())
  .action(async (name: string | undefined, options) => listSchedules(name, options, out));

program
  .command('status')
  .description(
    'show a job, readable by a person, and what holds a step up (a queue no worker listens to); exit 1 if it failed, was aborted or cancelled',
  )
  .argument('<id>', 'the job id')
  .option('--json', 'print the job document')
  .addOption(namespaceOption())
  .addOption(urlOption())
  .action(async (id: string, options) => {
    process.exitCode = await status(id, options, out);
  });

program
  .command('watch')
  .description(
    "live progress until the job ends: steps and children done, the step(s) running, a fan-out's rate and ETA, a queue no worker listens to; exit 1 if it failed",
  )
  .argument('<id>', 'the job id')
  .addOption(namespaceOption())
  .addOption(urlOption())
  .action(async (id: string, options) => {
    process.exitCode = await watch(id, options, out);
  });

program
  .command('history')
  .description(
    'what happened to a job, oldest first: each step requested, answered (by which worker), retried or timed out, and who started, signalled, paused, resumed, cancelled or retried it',
  )
  .argument('<id>', 'the job id')
  .addOption(outputOption())
  .addOption(namespaceOption())
  .addOption(urlOption())
  .action(async (id: string, options) => history(id, options, out));

program
  .command('deliveries')
  .description(
    "a job's webhook deliveries (notify:) and how each went; --dead: the namespace's dead letters; --redeliver ID: post one again",
  )
  .argument('[id]', 'the job id')
  .option('--dead', "the namespace's dead letters, newest first")
  .option('--redeliver <delivery>', 'make this delivery due now, with its attempts anew')
  .addOption(outputOption())
  .addOption(namespaceOption())
  .addOption(urlOption())
  .action(async (id: string | undefined, options) => deliveries(id, options, out));

program
  .command('jobs')
  .description('list jobs, newest first, searched on the server')
  .option('--workflow <name>', 'only this workflow')
  .option(
    '--status <status>',
    'running (default), waiting (a step waits for a signal, or its worker suspended it), pending (not started), scheduled, queued, paused, completed, failed, cancelled, aborted or all',
  )
  .option(
    '--attr <name=value>',
    "a search attribute (the workflow's searchAttributes:); give it again for more",
    (value: string, previous: string[] = []) => [...previous, value],
  )
  .option('--created-after <time>', 'created at or after this time (RFC 3339, e.g. 2026-11-27T10:00:00Z)')
  .option('--created-before <time>', 'created before this time')
  .option('--ended-after <time>', 'ended at or after this time')
  .option('--ended-before <time>', 'ended before this time')
  .option('--error <text>', 'whose error holds this text (any case)')
  .option('--limit <n>', 'at most this many (a page)', '50')
  .option('--all', 'every page, not only the first')
  .option('--cursor <cursor>', 'go on from where a previous listing stopped')
  .addOption(outputOption())
  .addOption(namespaceOption())
  .addOption(urlOption())
  .action(async (options) => listJobs(options, out));

const archive = program
  .command('archive')
  .description(
    "read archived jobs: serve's --retain files (--dir), the deployed stack's bucket (--s3), or one downloaded object (--file)",
  );
archive
  .command('list')
  .description('the archive files, oldest first: their day and how many jobs each holds')
  .option('--dir <dir>', 'the archive directory (serve --archive-dir)', DEFAULT_ARCHIVE_DIR)
  .option(
    '--s3 <url>',
    "the deployed archive: s3://BUCKET (the stack's ArchiveBucket output), or s3://BUCKET/PREFIX",
  )
  .option('--file <path>', 'one archive file (an object downloaded from the bucket)')
  .addOption(outputOption())
  .action(async (options) => listArchiveFiles(options, out));
archive
  .command('show')
  .description('an archived job as it was when archived (its latest copy), with its fan-out children')
  .argument('<id>', 'the job id')
  .option('--dir <dir>', 'the archive directory (serve --archive-dir)', DEFAULT_ARCHIVE_DIR)
  .option(
    '--s3 <url>',
    "the deployed archive: s3://BUCKET (the stack's ArchiveBucket output), or s3://BUCKET/PREFIX",
  )
  .option('--file <path>', 'one archive file (an object downloaded from the bucket)')
  .action(async (id: string, options) => {
    process.exitCode = await showArchivedJob(id, options, out);
  });

program
  .command('workflows')
  .description(
    'list the registered workflows: latest version, enabled, jobs running, queued and scheduled (when some wait), completed and failed',
  )
  .addOption(outputOption())
  .addOption(namespaceOption())
  .addOption(urlOption())
  .action(async (options) => listWorkflows(options, out));

program
  .command('describe')
  .description('show a registered workflow: its steps and their keys, its tasks, its versions')
  .argument('<workflow>', 'the workflow name')
  .option('--version <n>', 'this version (default: the latest)')
  .addOption(outputOption())
  .addOption(namespaceOption())
  .addOption(urlOption())
  .action(async (name: string, options) => describeWorkflow(name, options, out));

program
  .command('queues')
  .description(
    'each step queue of the registered workflows: messages ready and consumers, as the broker says (SQS does not count consumers)',
  )
  .option('--workflow <name>', 'only this workflow')
  .addOption(outputOption())
  .addOption(namespaceOption())
  .addOption(urlOption())
  .action(async (options) => listQueues(options, out));

program
  .command('cancel')
  .description(
    'cancel a job (a child id cancels its top-level job), or with --filter every job a search finds',
  )
  .argument('[id]', 'the job id')
  .option(
    '--filter <search>',
    'the jobs to cancel: NAME=VALUE pairs of GET /api/jobs, e.g. "status=waiting attr=customer=c-42"',
  )
  .option('--dry-run', 'with --filter: print how many jobs it finds, and change nothing')
  .addOption(namespaceOption())
  .addOption(urlOption())
  .action(async (id: string | undefined, options) => byIdOrFilter('cancel', id, options));

program
  .command('pause')
  .description(
    'pause a job and its children: nothing new is dispatched until resume; replies are still stored (a child id pauses its top-level job)',
  )
  .argument('<id>', 'the job id')
  .addOption(namespaceOption())
  .addOption(urlOption())
  .action(async (id: string, options) => command('pause', id, options, out));

program
  .command('resume')
  .description('resume a paused job: what became ready while it was paused is dispatched')
  .argument('<id>', 'the job id')
  .addOption(namespaceOption())
  .addOption(urlOption())
  .action(async (id: string, options) => command('resume', id, options, out));

program
  .command('retry')
  .description(
    'run a failed or cancelled job again: completed steps keep their outputs; with --filter every such job a search finds',
  )
  .argument('[id]', 'the job id')
  .option(
    '--filter <search>',
    'the jobs to retry: NAME=VALUE pairs of GET /api/jobs, e.g. "status=failed error=timeout"',
  )
  .option('--dry-run', 'with --filter: print how many jobs it finds, and change nothing')
  .addOption(namespaceOption())
  .addOption(urlOption())
  .action(async (id: string | undefined, options) => byIdOrFilter('retry', id, options));

program
  .command('rerun')
  .description(
    'run an ended job again from a step: it and the steps after it start anew, earlier outputs are kept, the old attempts stay in the history',
  )
  .argument('<id>', 'the top-level job id')
  .requiredOption('--from <step>', 'the step to run again from')
  .option(
    '--input <file>',
    "the step's new input: a JSON file (a worker step is sent it; a signal step takes it as its signal)",
  )
  .addOption(namespaceOption())
  .addOption(urlOption())
  .action(async (id: string, options) => rerun(id, options, out));

program
  .command('signal')
  .description(
    'complete a signal step (its output is the step\'s input with the --input keys over it), or send a suspended step to its worker again (with the --input body under "signal")',
  )
  .argument('<id>', 'the job id (a child id for a step inside a task)')
  .argument('<step>', 'the signal step, or the suspended step')
  .option('--input <json>', 'the signal body: JSON, or @file.json', '{}')
  .addOption(namespaceOption())
  .addOption(urlOption())
  .action(async (id: string, step: string, options) => command('signal', id, { ...options, step }, out));

const token = program
  .command('token')
  .description('scoped tokens: a namespace (or *) and a role, read, run or admin (needs an admin token)');

token
  .command('create')
  .description(
    'create a token of --namespace (or --all-namespaces): its secret is printed once, alone on stdout',
  )
  .requiredOption(
    '--role <role>',
    'read (GET routes), run (also start, cancel, retry, signal, pause, resume) or admin (also register workflows and manage tokens)',
  )
  .option('--description <text>', 'who or what holds it')
  .option('--all-namespaces', 'a token of every namespace (*)')
  .addOption(outputOption())
  .addOption(namespaceOption())
  .addOption(urlOption())
  .action(async (options) =>
    createToken({ ...options, scope: options.allNamespaces ? '*' : undefined }, out),
  );

token
  .command('list')
  .description('list the tokens you administer, without their secrets')
  .addOption(outputOption())
  .addOption(urlOption())
  .action(async (options) => listTokens(options, out));

token
  .command('revoke')
  .description('revoke a token: refused from its next request on (deployed, within 30 seconds)')
  .argument('<id>', 'the token id (token list)')
  .addOption(urlOption())
  .action(async (id: string, options) => revokeToken(id, options, out));

program
  .command('namespaces')
  .description('the namespaces your token sees, with the queue prefix and vhosts the operator set for each')
  .addOption(outputOption())
  .addOption(urlOption())
  .action(async (options) => listNamespaces(options, out));

const namespace = program
  .command('namespace')
  .description("a namespace's settings: its queue prefix and allowed vhosts, which only the operator sets");

namespace
  .command('set')
  .description("set a namespace's queue prefix or allowed vhosts (needs a token of every namespace, admin)")
  .argument('<namespace>', 'the namespace')
  .option(
    '--queue-prefix <prefix>',
    "every step queue of the namespace starts with it, and no other namespace's may",
  )
  .option('--no-queue-prefix', 'take the queue prefix away')
  .option('--vhost <name...>', 'the RabbitMQ vhosts its workflows may use (repeat for several)')
  .option(
    '--no-vhost',
    "take the vhost list away: the broker URL's vhost only (in default: any vhost, the original's way)",
  )
  .addOption(outputOption())
  .addOption(urlOption())
  .action(async (name: string, options) => setNamespace(name, options, out));

namespace
  .command('show')
  .description('what the operator set for a namespace your token sees')
  .argument('<namespace>', 'the namespace')
  .addOption(outputOption())
  .addOption(urlOption())
  .action(async (name: string, options) => showNamespace(name, options, out));

try {
  await program.parseAsync(process.argv);
} catch (error) {
  process.stderr.write(
    `switchyard: ${error instanceof CliError ? error.message : ((error as Error).stack ?? error)}\n`,
  );
  process.exitCode = error instanceof CliError ? error.exitCode : 2;
}
