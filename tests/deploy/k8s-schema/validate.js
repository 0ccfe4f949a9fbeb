#!/usr/bin/env node
// Checks the manifests `strata k8s` prints against the Kubernetes API
// schemas of their kinds (kubernetes-models), as strictly as
// `kubectl apply --validate=strict`: wrong types, values outside an enum,
// missing required fields, and fields the schema does not know.
//
//   node validate.js MANIFESTS.yaml [MANIFESTS.json]
//
// The YAML is read with YAML 1.1 rules, as kubectl reads it. With the JSON
// List of the same run, its items must equal the YAML documents (the
// random job token aside). A PyTorchJob (no schema in kubernetes-models)
// has its pod templates validated as core PodTemplateSpecs and the rest of
// its structure checked here. Prints one line per manifest; exits 1 naming
// every problem.
"use strict";

const fs = require("fs");
const assert = require("assert");
const YAML = require("yaml");
const { ConfigMap, PersistentVolumeClaim, PodTemplate, Secret, Service } = require(
  "kubernetes-models/v1",
);
const { Job } = require("kubernetes-models/batch/v1");
const { ObjectMeta } = require("@kubernetes-models/apimachinery/apis/meta/v1/ObjectMeta");

const models = {
  "v1/ConfigMap": ConfigMap,
  "v1/PersistentVolumeClaim": PersistentVolumeClaim,
  "v1/Secret": Secret,
  "v1/Service": Service,
  "batch/v1/Job": Job,
};

// A copy of `value` whose objects record the properties a validator reads.
// The generated validators read every property their schema declares and
// list the keys only of maps (labels, resources, data); a key never read
// of an object never listed is a field the schema does not know.
function watched(value, path, records) {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((item, i) => watched(item, `${path}/${i}`, records));
  const record = { path, keys: Object.keys(value), read: new Set(), listed: false };
  records.push(record);
  const copy = {};
  for (const key of record.keys) copy[key] = watched(value[key], `${path}/${key}`, records);
  return new Proxy(copy, {
    get(target, key, receiver) {
      if (typeof key === "string") record.read.add(key);
      return Reflect.get(target, key, receiver);
    },
    ownKeys(target) {
      record.listed = true;
      return Reflect.ownKeys(target);
    },
  });
}

// Problems of `object` against `Model`'s schema, each "PATH: MESSAGE".
function schemaProblems(Model, object, pathPrefix = "") {
  const records = [];
  const problems = [];
  try {
    Model.prototype.validate.call(watched(object, "", records));
  } catch (error) {
    for (const detail of error.errors || [{ instancePath: "", message: error.message }])
      problems.push(`${pathPrefix}${detail.instancePath || "/"}: ${detail.message}`);
  }
  for (const record of records) {
    if (record.listed) continue;
    for (const key of record.keys)
      if (!record.read.has(key)) problems.push(`${pathPrefix}${record.path}/${key}: unknown field`);
  }
  return problems;
}

function unknownKeys(object, known, path) {
  return Object.keys(object || {})
    .filter((key) => !known.includes(key))
    .map((key) => `${path}/${key}: unknown field`);
}

// The training operator's v1 API (>= 1.7): PyTorchJobSpec, RunPolicy,
// ReplicaSpec, and what its controller needs of the pod.
function replicaProblems(type, replica, name) {
  const path = `/spec/pytorchReplicaSpecs/${type}`;
  const problems = unknownKeys(replica, ["replicas", "restartPolicy", "template"], path);
  if (!Number.isInteger(replica.replicas) || replica.replicas < 1)
    problems.push(`${path}/replicas: must be an integer of at least 1`);
  if (type === "Master" && replica.replicas !== 1) problems.push(`${path}/replicas: must be 1`);
  if (!["Always", "OnFailure", "Never", "ExitCode"].includes(replica.restartPolicy))
    problems.push(`${path}/restartPolicy: must be Always, OnFailure, Never or ExitCode`);
  const podTemplate = {
    apiVersion: "v1",
    kind: "PodTemplate",
    metadata: { name: `${name}-${type.toLowerCase()}` },
    template: replica.template,
  };
  problems.push(...schemaProblems(PodTemplate, podTemplate, path));
  const containers = (replica.template && replica.template.spec && replica.template.spec.containers) || [];
  const pytorch = containers.find((container) => container.name === "pytorch");
  if (!pytorch) problems.push(`${path}/template: no container named pytorch (the operator needs one)`);
  else if (!(pytorch.ports || []).some((port) => port.name === "pytorchjob-port"))
    problems.push(`${path}/template: container pytorch has no port named pytorchjob-port`);
  return problems;
}

function pyTorchJobProblems(job) {
  const problems = unknownKeys(job, ["apiVersion", "kind", "metadata", "spec"], "");
  problems.push(...schemaProblems(ObjectMeta, job.metadata, "/metadata"));
  const spec = job.spec || {};
  problems.push(
    ...unknownKeys(spec, ["runPolicy", "elasticPolicy", "pytorchReplicaSpecs", "nprocPerNode"], "/spec"),
  );
  if (spec.nprocPerNode !== undefined && typeof spec.nprocPerNode !== "string")
    problems.push("/spec/nprocPerNode: must be a string");
  const runPolicy = spec.runPolicy || {};
  problems.push(
    ...unknownKeys(
      runPolicy,
      ["cleanPodPolicy", "ttlSecondsAfterFinished", "activeDeadlineSeconds", "backoffLimit",
        "schedulingPolicy", "suspend", "managedBy"],
      "/spec/runPolicy",
    ),
  );
  if (runPolicy.backoffLimit !== undefined && !(Number.isInteger(runPolicy.backoffLimit) && runPolicy.backoffLimit >= 0))
    problems.push("/spec/runPolicy/backoffLimit: must be an integer of at least 0");
  const replicas = spec.pytorchReplicaSpecs || {};
  problems.push(...unknownKeys(replicas, ["Master", "Worker"], "/spec/pytorchReplicaSpecs"));
  if (!replicas.Master) problems.push("/spec/pytorchReplicaSpecs/Master: missing");
  for (const type of Object.keys(replicas))
    problems.push(...replicaProblems(type, replicas[type], job.metadata && job.metadata.name));
  return problems;
}

function problemsOf(manifest) {
  const kind = `${manifest.apiVersion}/${manifest.kind}`;
  if (kind === "kubeflow.org/v1/PyTorchJob") return pyTorchJobProblems(manifest);
  const Model = models[kind];
  if (!Model) return [`/: no schema for ${kind}`];
  return schemaProblems(Model, manifest);
}

function readYaml(path) {
  const documents = YAML.parseAllDocuments(fs.readFileSync(path, "utf8"), { version: "1.1" });
  for (const document of documents) {
    if (document.errors.length > 0) throw new Error(`${path}: ${document.errors[0].message}`);
  }
  return documents.map((document) => document.toJS());
}

function withoutToken(manifests) {
  return manifests.map((m) =>
    m.kind === "Secret" ? { ...m, stringData: { ...m.stringData, token: "<random>" } } : m,
  );
}

function main([yamlPath, jsonPath]) {
  const manifests = readYaml(yamlPath);
  if (manifests.length === 0) throw new Error(`${yamlPath}: no manifests`);
  if (jsonPath) {
    const list = JSON.parse(fs.readFileSync(jsonPath, "utf8"));
    assert.strictEqual(list.kind, "List", `${jsonPath}: not a List`);
    assert.deepStrictEqual(withoutToken(manifests), withoutToken(list.items),
      `${yamlPath} and ${jsonPath} hold different manifests`);
  }
  let failed = false;
  for (const manifest of manifests) {
    const name = `${manifest.kind}/${manifest.metadata && manifest.metadata.name}`;
    const problems = problemsOf(manifest);
    console.log(problems.length === 0 ? `valid: ${name}` : `INVALID: ${name}`);
    for (const problem of problems) console.log(`  ${problem}`);
    failed = failed || problems.length > 0;
  }
  return failed ? 1 : 0;
}

try {
  process.exitCode = main(process.argv.slice(2));
} catch (error) {
  console.error(`validate.js: ${error.message}`);
  process.exitCode = 1;
}
