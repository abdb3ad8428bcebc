import { useMemo } from 'preact/hooks';
import { fetchDefinition } from '../definitions.js';
import { layoutGraph } from '../graph-layout.js';
import { workflowGraph } from '../graph-model.js';
import { GraphView } from '../graph-view.js';
import { useResource } from '../hooks.js';
import { ErrorNote, Loading } from './notes.js';

/** The steps of one version of a workflow, drawn without job state. */
export function DefinitionGraph({ name, version }: { name: string; version: number }) {
  const definition = useResource((client) => fetchDefinition(client, name, version), `${name}@${version}`);
  const layout = useMemo(
    () => definition.data && layoutGraph(workflowGraph(definition.data.definition)),
    [definition.data],
  );
  if (definition.error) return <ErrorNote error={definition.error} onRetry={definition.reload} />;
  if (!layout || definition.data?.version !== version) return <Loading what="the graph" />;
  return <GraphView layout={layout} title={`The steps of ${name}, version ${version}`} />;
}
