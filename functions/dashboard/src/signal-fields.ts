import type { Json, JsonObject } from '../../../engine/index.js';

/** One field of a signal form, drawn from a property of the step's `signal.schema`. */
export interface SignalField {
  name: string;
  /** The property's `title`, else its name. */
  label: string;
  /** `description`, shown under the field. */
  help?: string;
  required: boolean;
  kind: 'choice' | 'text' | 'number' | 'integer' | 'boolean';
  /** `choice`: the `enum`'s values. */
  choices?: Json[];
}

/**
 * The fields of a form for a signal schema: an object schema whose properties are each a choice
 * (`enum`), text, a number or a yes/no. Undefined when the schema is not such (nested objects,
 * lists, no properties): then the form is a JSON text area.
 */
export function signalFieldsOf(schema: JsonObject | undefined): SignalField[] | undefined {
  if (!schema || !isObject(schema.properties)) return undefined;
  const required = Array.isArray(schema.required) ? schema.required.filter((n) => typeof n === 'string') : [];
  const fields: SignalField[] = [];
  for (const [name, raw] of Object.entries(schema.properties)) {
    if (!isObject(raw)) return undefined;
    const kind = kindOf(raw);
    if (!kind) return undefined;
    const field: SignalField = {
      name,
      label: typeof raw.title === 'string' ? raw.title : name,
      required: required.includes(name),
      kind,
    };
    if (typeof raw.description === 'string') field.help = raw.description;
    if (kind === 'choice') field.choices = raw.enum as Json[];
    fields.push(field);
  }
  return fields.length ? fields : undefined;
}

function kindOf(property: JsonObject): SignalField['kind'] | undefined {
  if (Array.isArray(property.enum) && property.enum.length) return 'choice';
  switch (property.type) {
    case 'string':
      return 'text';
    case 'number':
      return 'number';
    case 'integer':
      return 'integer';
    case 'boolean':
      return 'boolean';
    default:
      return undefined;
  }
}

/**
 * The body the form's values make: each filled field as its kind reads it (a choice as the enum's
 * value, a number as a number); empty fields are left out, so the schema names a missing required one.
 */
export function signalBodyOf(
  fields: readonly SignalField[],
  values: Readonly<Record<string, string | boolean>>,
): JsonObject {
  const body: JsonObject = {};
  for (const field of fields) {
    const value = values[field.name];
    if (field.kind === 'boolean') {
      if (value !== undefined) body[field.name] = value === true;
      continue;
    }
    if (typeof value !== 'string' || value === '') continue;
    if (field.kind === 'choice') body[field.name] = (field.choices ?? [])[Number(value)] ?? value;
    else if (field.kind === 'number' || field.kind === 'integer') body[field.name] = Number(value);
    else body[field.name] = value;
  }
  return body;
}

const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
