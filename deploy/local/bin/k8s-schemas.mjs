#!/usr/bin/env node
// Writes strict JSON schemas of Kubernetes objects for kubeconform, offline, from sources that
// setup.sh fetched through the Go module proxy:
//   - the Kubernetes OpenAPI v2 spec (k8s.io/kubernetes: api/openapi-spec/swagger.json): every
//     built-in kind of that release;
//   - CustomResourceDefinition YAML files (prometheus-operator's ServiceMonitor and PrometheusRule,
//     KEDA's ScaledObject, ...): the openAPIV3Schema of each served version.
// Layout (kubeconform -schema-location '<out>/{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json'):
//   <out>/<group>/<kind lowercase>_<version>.json, e.g. apps/deployment_v1.json; the core group's
//   kinds under the version: v1/service_v1.json.
// Strict like kubeconform's -strict schemas: an object with declared properties admits no others,
// so a misspelt field fails validation instead of being dropped by the API server.
//
// Usage: node deploy/local/bin/k8s-schemas.mjs --swagger <swagger.json> [--crd <file.yaml>]... --out <dir>
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';

const args = process.argv.slice(2);
let swaggerPath;
let outDir;
const crds = [];
for (let i = 0; i < args.length; i++) {
  const value = args[i + 1];
  if (args[i] === '--swagger') swaggerPath = value;
  else if (args[i] === '--crd') crds.push(value);
  else if (args[i] === '--out') outDir = value;
  else {
    console.error(`k8s-schemas: unknown argument ${args[i]}`);
    process.exit(2);
  }
  i++;
}
if (!swaggerPath || !outDir) {
  console.error('usage: k8s-schemas.mjs --swagger <swagger.json> [--crd <file.yaml>]... --out <dir>');
  process.exit(2);
}

/** Kubernetes' own formats that JSON schema does not know. */
function special(node) {
  if (node.format === 'int-or-string' || node['x-kubernetes-int-or-string'] === true) {
    const { type: _t, format: _f, ...rest } = node;
    return { ...rest, oneOf: [{ type: 'string' }, { type: 'integer' }] };
  }
  return undefined;
}

/** A copy of an OpenAPI schema node as strict JSON schema (draft-07). refPrefix maps $refs. */
function convert(node, refPrefix) {
  if (Array.isArray(node)) return node.map((n) => convert(n, refPrefix));
  if (node === null || typeof node !== 'object') return node;
  const sp = special(node);
  if (sp) return sp;
  const out = {};
  for (const [key, value] of Object.entries(node)) {
    if (key.startsWith('x-kubernetes-') || key === 'format') continue;
    if (key === '$ref') out.$ref = value.replace('#/definitions/', refPrefix);
    else if (key === 'properties' || key === 'patternProperties') {
      out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, convert(v, refPrefix)]));
    } else if (key === 'nullable') {
      // handled below
    } else out[key] = convert(value, refPrefix);
  }
  if (node.nullable === true && typeof out.type === 'string') out.type = [out.type, 'null'];
  const preserve = node['x-kubernetes-preserve-unknown-fields'] === true;
  if (out.properties && out.additionalProperties === undefined && !preserve) out.additionalProperties = false;
  return out;
}

function write(group, kind, version, schema) {
  // kubeconform's {{ .Group }} is the part of apiVersion before the slash: the version itself for
  // the core group (Service: v1/service_v1.json).
  const dir = path.join(outDir, group || version);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, `${kind.toLowerCase()}_${version}.json`), `${JSON.stringify(schema)}\n`);
}

// --- Built-in kinds -------------------------------------------------------------------------
const swagger = JSON.parse(readFileSync(swaggerPath, 'utf8'));
const definitions = {};
for (const [name, def] of Object.entries(swagger.definitions)) definitions[name] = convert(def, '#/definitions/');
// resource.Quantity is a string in the spec, but manifests may write `cpu: 1`.
const quantity = 'io.k8s.apimachinery.pkg.api.resource.Quantity';
if (definitions[quantity]) definitions[quantity] = { oneOf: [{ type: 'string' }, { type: 'number' }] };

/** The definitions a schema reaches through $ref, transitively. */
function reachable(start) {
  const seen = new Set();
  const stack = [start];
  while (stack.length) {
    const node = stack.pop();
    if (Array.isArray(node)) stack.push(...node);
    else if (node && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) {
        if (k === '$ref' && typeof v === 'string') {
          const name = v.replace('#/definitions/', '');
          if (!seen.has(name)) {
            seen.add(name);
            stack.push(definitions[name]);
          }
        } else stack.push(v);
      }
    }
  }
  return seen;
}

let builtIn = 0;
for (const [name, def] of Object.entries(swagger.definitions)) {
  for (const gvk of def['x-kubernetes-group-version-kind'] ?? []) {
    // List kinds and the like are never in a manifest; skip what has no apiVersion field.
    if (!def.properties?.apiVersion || !def.properties?.kind) continue;
    const own = definitions[name];
    const defs = Object.fromEntries([...reachable(own)].map((n) => [n, definitions[n]]));
    const schema = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      ...own,
      properties: {
        ...own.properties,
        apiVersion: { type: 'string', enum: [gvk.group ? `${gvk.group}/${gvk.version}` : gvk.version] },
        kind: { type: 'string', enum: [gvk.kind] },
      },
      required: [...new Set([...(own.required ?? []), 'apiVersion', 'kind'])],
      definitions: defs,
    };
    write(gvk.group, gvk.kind, gvk.version, schema);
    builtIn++;
  }
}

// --- Custom resources -----------------------------------------------------------------------
let custom = 0;
for (const file of crds) {
  for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
    const crd = doc.toJS();
    if (crd?.kind !== 'CustomResourceDefinition') continue;
    const { group, names, versions } = crd.spec;
    for (const v of versions) {
      const open = v.schema?.openAPIV3Schema;
      if (!open) continue;
      const own = convert(open, '#/definitions/');
      const schema = {
        $schema: 'http://json-schema.org/draft-07/schema#',
        ...own,
        properties: {
          ...own.properties,
          apiVersion: { type: 'string', enum: [`${group}/${v.name}`] },
          kind: { type: 'string', enum: [names.kind] },
          // The API server checks metadata, not the CRD schema; enough to catch a misplaced field.
          metadata: { type: 'object' },
        },
        required: [...new Set([...(own.required ?? []), 'apiVersion', 'kind'])],
        additionalProperties: false,
      };
      write(group, names.kind, v.name, schema);
      custom++;
    }
  }
}
console.log(`k8s-schemas: ${builtIn} built-in and ${custom} custom resource schemas in ${outDir}`);
