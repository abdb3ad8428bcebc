import { readFile } from 'node:fs/promises';
import { stringify } from 'yaml';
import { formatDefinitionError, loadWorkflows, type WorkflowDefinition } from '../../../engine/index.js';
import { SignalSchemas, signalSchemasOf } from '../../manager/signal-schemas.js';
import { ApiClient, CliError, type ClientOptions } from '../client.js';
import { type GraphFormat, renderGraph } from '../render-graph.js';

async function load(
  file: string,
): Promise<{ workflows: WorkflowDefinition[]; errors: string[]; namespace?: string; queuePrefix?: string }> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    return {
      workflows: [],
      errors: [
        `${file}: cannot read it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
      ],
    };
  }
  const { errors, ...loaded } = loadWorkflows(text, { file });
  const schemas = new SignalSchemas();
  // A signal schema must be one Ajv can compile, as the manager checks at registration.
  const schemaErrors = loaded.workflows.flatMap((workflow) =>
    signalSchemasOf(workflow).flatMap(({ step, schema }) => {
      const problem = schemas.schemaProblem(schema);
      return problem
        ? [
            `${file}: workflow "${workflow.name}": step "${step}": "signal.schema" is not a JSON Schema: ${problem}`,
          ]
        : [];
    }),
  );
  return { ...loaded, errors: [...errors.map(formatDefinitionError), ...schemaErrors] };
}

/** Exit 0 when every file is valid; else each error on its own line and exit 1. */
export async function validate(files: string[], out: (line: string) => void): Promise<number> {
  let failed = false;
  for (const file of files) {
    const { workflows, errors } = await load(file);
    if (errors.length) {
      failed = true;
      for (const error of errors) out(error);
    } else {
      out(
        `${file}: ${workflows.length} workflow${workflows.length === 1 ? '' : 's'} valid (${workflows.map((w) => w.name).join(', ')})`,
      );
    }
  }
  return failed ? 1 : 0;
}

export async function graph(file: string, options: { workflow?: string; format?: string }): Promise<string> {
  const format = (options.format ?? 'mermaid') as GraphFormat;
  if (format !== 'mermaid' && format !== 'dot')
    throw new CliError(`--format must be mermaid or dot, got "${options.format}"`);
  const { workflows, errors } = await load(file);
  if (errors.length) throw new CliError(errors.join('\n'));
  const chosen = options.workflow
    ? workflows.filter((workflow) => workflow.name === options.workflow)
    : workflows;
  if (!chosen.length) {
    throw new CliError(
      `${file} has no workflow named "${options.workflow}" (it has: ${workflows.map((w) => w.name).join(', ')})`,
    );
  }
  return chosen.map((workflow) => renderGraph(workflow, format)).join('\n');
}

/**
 * Registers each workflow of the file through `PUT /api/workflow/{name}`, in the namespace the file
 * names (`namespace:`) or `--namespace` (or SWITCHYARD_NAMESPACE) names; the two must agree. The
 * file's `queuePrefix:` goes with each workflow.
 */
export async function push(file: string, client: ClientOptions, out: (line: string) => void): Promise<void> {
  const { workflows, errors, namespace, queuePrefix } = await load(file);
  if (errors.length) throw new CliError(errors.join('\n'));
  const named = client.namespace || process.env.SWITCHYARD_NAMESPACE;
  if (namespace !== undefined && named && named !== namespace) {
    throw new CliError(
      `${file} names namespace "${namespace}", but --namespace (or SWITCHYARD_NAMESPACE) names "${named}"`,
    );
  }
  const api = new ApiClient({ ...client, namespace: namespace ?? named });
  for (const workflow of workflows) {
    const { body } = await api.request<{ version: number; created: boolean }>(
      'PUT',
      `/api/workflow/${encodeURIComponent(workflow.name)}`,
      stringify(
        queuePrefix === undefined ? { workflows: [workflow] } : { queuePrefix, workflows: [workflow] },
      ),
      'application/yaml',
    );
    out(
      `${workflow.name}: version ${body.version}${body.created ? ' (new)' : ' (unchanged)'} in namespace ${api.namespace}`,
    );
  }
}
