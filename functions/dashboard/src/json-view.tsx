import { useState } from 'preact/hooks';
import type { Json } from './api-types.js';
import { jsonSummary, LONG_STRING, MANY_ENTRIES, startsOpen } from './json-shape.js';

/** Pretty-printed JSON whose objects and arrays fold; big ones start folded. */
export function JsonView({ value, label }: { value: Json | undefined; label?: string }) {
  const [copied, setCopied] = useState(false);
  if (value === undefined) return <p class="muted json-empty">Not available yet.</p>;
  const copy = async () => {
    await navigator.clipboard?.writeText(JSON.stringify(value, null, 2));
    setCopied(true);
    setTimeout(() => setCopied(false), 1500);
  };
  return (
    <div class="json" data-json={label}>
      <button type="button" class="json-copy button-ghost" onClick={copy}>
        {copied ? 'Copied' : 'Copy'}
      </button>
      <div class="json-body">
        <JsonNode value={value} depth={0} last />
      </div>
    </div>
  );
}

function JsonNode({
  name,
  value,
  depth,
  last,
}: {
  name?: string;
  value: Json;
  depth: number;
  last: boolean;
}) {
  const key = name !== undefined && <span class="json-key">{JSON.stringify(name)}: </span>;
  const comma = last ? '' : ',';
  if (value === null || typeof value !== 'object') {
    return (
      <div class="json-line">
        {key}
        <JsonScalar value={value} />
        {comma}
      </div>
    );
  }
  return <JsonContainer name={key} value={value} depth={depth} comma={comma} />;
}

function JsonContainer({
  name,
  value,
  depth,
  comma,
}: {
  name: preact.ComponentChildren;
  value: Json[] | { [key: string]: Json };
  depth: number;
  comma: string;
}) {
  const [open, setOpen] = useState(() => startsOpen(value, depth));
  const [all, setAll] = useState(false);
  const isArray = Array.isArray(value);
  const entries: [string | undefined, Json][] = isArray
    ? value.map((item) => [undefined, item])
    : Object.entries(value);
  const [start, end] = isArray ? ['[', ']'] : ['{', '}'];
  if (entries.length === 0) {
    return (
      <div class="json-line">
        {name}
        <span class="json-punct">{`${start}${end}`}</span>
        {comma}
      </div>
    );
  }
  const shown = all ? entries : entries.slice(0, MANY_ENTRIES);
  return (
    <div class="json-block">
      <div class="json-line">
        <button
          type="button"
          class="json-toggle"
          aria-expanded={open}
          title={open ? 'Fold' : 'Unfold'}
          onClick={() => setOpen(!open)}
        >
          {open ? '▾' : '▸'}
        </button>
        {name}
        <span class="json-punct">{start}</span>
        {!open && (
          <>
            <button type="button" class="json-summary" onClick={() => setOpen(true)}>
              {jsonSummary(value)}
            </button>
            <span class="json-punct">{end}</span>
            {comma}
          </>
        )}
      </div>
      {open && (
        <>
          <div class="json-children">
            {shown.map(([key, item], index) => (
              <JsonNode
                key={key ?? index}
                name={key}
                value={item}
                depth={depth + 1}
                last={index === entries.length - 1}
              />
            ))}
            {shown.length < entries.length && (
              <button type="button" class="json-more" onClick={() => setAll(true)}>
                Show all {entries.length}
              </button>
            )}
          </div>
          <div class="json-line">
            <span class="json-punct">{end}</span>
            {comma}
          </div>
        </>
      )}
    </div>
  );
}

function JsonScalar({ value }: { value: string | number | boolean | null }) {
  const [full, setFull] = useState(false);
  if (typeof value === 'string') {
    const text = JSON.stringify(value);
    if (text.length > LONG_STRING && !full) {
      return (
        <span class="json-string">
          {text.slice(0, LONG_STRING)}…{' '}
          <button type="button" class="json-more" onClick={() => setFull(true)}>
            {(text.length - LONG_STRING).toLocaleString('en-US')} more
          </button>
        </span>
      );
    }
    return <span class="json-string">{text}</span>;
  }
  if (typeof value === 'number') return <span class="json-number">{String(value)}</span>;
  if (typeof value === 'boolean') return <span class="json-boolean">{String(value)}</span>;
  return <span class="json-null">null</span>;
}
