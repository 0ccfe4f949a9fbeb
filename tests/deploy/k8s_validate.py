"""Checks the manifests `strata k8s` prints against the Kubernetes API
schemas of their kinds, as strictly as `kubectl apply --validate=strict`:
wrong types, values outside an enum, missing required fields, and fields
the schema does not know.

    python k8s_validate.py MANIFESTS.yaml [MANIFESTS.json]

The YAML is read with YAML 1.1 rules, as kubectl reads it (`yes` is a
boolean there). With the JSON List of the same run, its items must equal the
YAML documents (the Secret's random token aside). The schemas are the strict
ones kubernetes-validate carries (no network). A PyTorchJob has no schema
there: its structure is checked by PYTORCH_JOB below and its pod templates
as core PodTemplateSpecs. Prints one line per manifest and a line per
problem under it; exits 1 naming every problem, or naming the input it
could not read.
"""

import copy
import functools
import json
import sys
from collections.abc import Hashable

import jsonschema
import yaml
from kubernetes_validate import utils
from referencing import Registry, Resource

# The oldest release kubernetes-validate 1.37.0 ships, and the strictest
# check: Kubernetes keeps every field of a v1 API, with its type, in later
# releases, so manifests this schema accepts are accepted by every later API
# server; a field added after 1.25 is refused here, as a 1.25 server
# validating strictly would refuse it.
KUBERNETES_VERSION = "1.25.0"
SCHEMA_DIR = f"kubernetes-json-schema/v{KUBERNETES_VERSION}-local-strict"
DEFINITIONS = "https://kubernetes.io/api/_definitions.json#/$defs/"

# The schema file of each kind, as kubernetes-validate names them.
KIND_SCHEMAS = {
    "v1/ConfigMap": "configmap-v1",
    "v1/PersistentVolumeClaim": "persistentvolumeclaim-v1",
    "v1/Secret": "secret-v1",
    "v1/Service": "service-v1",
    "batch/v1/Job": "job-batch-v1",
}

# The schemas kubernetes-validate carries list no enum values (apiVersion
# and kind aside), so a completionMode of "Sometimes" would pass. Here are
# the enums the API declares (`+enum` in its Go types) for the fields these
# manifests set and their siblings, with the values of Kubernetes 1.25; the
# API server refuses any other value. An enum field given null is refused
# too: no manifest here has a reason to write one.
ENUMS = {
    "io.k8s.api.batch.v1.JobSpec": {"completionMode": ["NonIndexed", "Indexed"]},
    "io.k8s.api.core.v1.PodSpec": {
        "restartPolicy": ["Always", "OnFailure", "Never"],
        "dnsPolicy": ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"],
        "preemptionPolicy": ["PreemptLowerPriority", "Never"],
    },
    "io.k8s.api.core.v1.Container": {
        "imagePullPolicy": ["Always", "Never", "IfNotPresent"],
        "terminationMessagePolicy": ["File", "FallbackToLogsOnError"],
    },
    "io.k8s.api.core.v1.ContainerPort": {"protocol": ["TCP", "UDP", "SCTP"]},
    "io.k8s.api.core.v1.ServicePort": {"protocol": ["TCP", "UDP", "SCTP"]},
    "io.k8s.api.core.v1.ServiceSpec": {
        "type": ["ClusterIP", "NodePort", "LoadBalancer", "ExternalName"],
        "sessionAffinity": ["ClientIP", "None"],
        "externalTrafficPolicy": ["Cluster", "Local"],
        "internalTrafficPolicy": ["Cluster", "Local"],
        "ipFamilyPolicy": ["SingleStack", "PreferDualStack", "RequireDualStack"],
    },
    "io.k8s.api.core.v1.PersistentVolumeClaimSpec": {
        "accessModes": ["ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"],
        "volumeMode": ["Block", "Filesystem"],
    },
    "io.k8s.api.core.v1.Toleration": {
        "operator": ["Exists", "Equal"],
        "effect": ["NoSchedule", "PreferNoSchedule", "NoExecute"],
    },
}


def definition(name):
    return {"$ref": DEFINITIONS + name}


# The training operator's v1 API (>= 1.7): PyTorchJobSpec, RunPolicy and
# ReplicaSpec, the fields it knows. pytorch_container_problems adds what its
# controller needs of the pod.
REPLICA = {
    "type": "object",
    "properties": {
        "replicas": {"type": "integer", "minimum": 1},
        "restartPolicy": {"enum": ["Always", "OnFailure", "Never", "ExitCode"]},
        "template": definition("io.k8s.api.core.v1.PodTemplateSpec"),
    },
    "required": ["replicas", "restartPolicy"],
    "additionalProperties": False,
}
RUN_POLICY = {
    "type": "object",
    "properties": {
        "cleanPodPolicy": {},
        "ttlSecondsAfterFinished": {},
        "activeDeadlineSeconds": {},
        "backoffLimit": {"type": "integer", "minimum": 0},
        "schedulingPolicy": {},
        "suspend": {},
        "managedBy": {},
    },
    "additionalProperties": False,
}
PYTORCH_JOB = {
    "type": "object",
    "properties": {
        "apiVersion": {},
        "kind": {},
        "metadata": definition("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"),
        "spec": {
            "type": "object",
            "properties": {
                "runPolicy": RUN_POLICY,
                "elasticPolicy": {},
                "pytorchReplicaSpecs": {
                    "type": "object",
                    "properties": {
                        # The Master is node 0, alone.
                        "Master": {"allOf": [REPLICA, {"properties": {"replicas": {"const": 1}}}]},
                        "Worker": REPLICA,
                    },
                    "required": ["Master"],
                    "additionalProperties": False,
                },
                "nprocPerNode": {"type": "string"},
            },
            "required": ["pytorchReplicaSpecs"],
            "additionalProperties": False,
        },
    },
    "required": ["metadata", "spec"],
    "additionalProperties": False,
}


class InputError(Exception):
    """Input that cannot be read or does not hold manifests."""


def schema_file(name):
    return utils.schema_contents(f"{SCHEMA_DIR}/{name}.json", KUBERNETES_VERSION)


def with_enums(definitions):
    for type_name, fields in ENUMS.items():
        properties = definitions["$defs"][type_name]["properties"]
        for field, values in fields.items():
            schema = properties[field]
            # accessModes is a list of modes: the enum is its items'.
            target = schema["items"] if "items" in schema else schema
            target["enum"] = values
    return definitions


@functools.cache
def registry():
    """The definitions every kind's schema refers to, read once."""
    return Resource.from_contents(with_enums(schema_file("_definitions"))) @ Registry()


def pointer(path):
    return "/" + "/".join(str(part) for part in path)


def shown(instance):
    """The value as a message shows it: whole when short."""
    if isinstance(instance, dict):
        return "{...}"
    if isinstance(instance, list):
        return "[...]"
    return repr(instance)[:40] + "..."


def message_of(error):
    """jsonschema's message, without a long value it starts by repeating
    (the whole pod spec of a field given the wrong type)."""
    message, value = error.message, repr(error.instance)
    if len(value) > 40 and message.startswith(value):
        return shown(error.instance) + message[len(value):]
    return message


def schema_problems(schema, instance):
    """Every way `instance` breaks `schema`, each "PATH: MESSAGE"."""
    validator = jsonschema.Draft202012Validator(schema, registry=registry())
    return [f"{pointer(e.path)}: {message_of(e)}" for e in validator.iter_errors(instance)]


def pytorch_container_problems(path, replica):
    """The operator runs the container named pytorch and points the others
    at its port named pytorchjob-port."""
    template = replica.get("template") if isinstance(replica, dict) else None
    spec = template.get("spec") if isinstance(template, dict) else None
    containers = spec.get("containers") if isinstance(spec, dict) else None
    pytorch = [c for c in containers or [] if isinstance(c, dict) and c.get("name") == "pytorch"]
    if not pytorch:
        return [f"{path}/template: no container named pytorch (the operator needs one)"]
    ports = pytorch[0].get("ports") or []
    if not any(isinstance(p, dict) and p.get("name") == "pytorchjob-port" for p in ports):
        return [f"{path}/template: container pytorch has no port named pytorchjob-port"]
    return []


def pytorch_job_problems(job):
    problems = schema_problems(PYTORCH_JOB, job)
    spec = job.get("spec")
    replicas = spec.get("pytorchReplicaSpecs") if isinstance(spec, dict) else None
    for replica_type, replica in (replicas if isinstance(replicas, dict) else {}).items():
        path = f"/spec/pytorchReplicaSpecs/{replica_type}"
        problems += pytorch_container_problems(path, replica)
    return problems


def problems_of(manifest):
    kind = f"{manifest.get('apiVersion')}/{manifest.get('kind')}"
    if kind == "kubeflow.org/v1/PyTorchJob":
        return pytorch_job_problems(manifest)
    if kind not in KIND_SCHEMAS:
        return [f"/: no schema for {kind}"]
    return schema_problems(schema_file(KIND_SCHEMAS[kind]), manifest)


class UniqueKeyLoader(yaml.SafeLoader):
    """YAML 1.1 as PyYAML reads it, refusing a key given twice in a mapping
    (PyYAML would keep the last one; kubectl refuses it)."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # `<<` merges a mapping whose keys the others override
            key = self.construct_object(key_node, deep=True)
            if isinstance(key, Hashable) and key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep)


def read_yaml(path):
    try:
        with open(path, encoding="utf-8") as file:
            documents = list(yaml.load_all(file, Loader=UniqueKeyLoader))
    except OSError as error:
        raise InputError(f"{path}: {error.strerror}") from error
    except yaml.YAMLError as error:
        raise InputError(f"{path}: {error}") from error
    if not documents:
        raise InputError(f"{path}: no manifests")
    for index, document in enumerate(documents):
        if not isinstance(document, dict):
            raise InputError(f"{path}: document {index + 1} is not a mapping")
    return documents


def read_list(path):
    try:
        with open(path, encoding="utf-8") as file:
            value = json.load(file)
    except OSError as error:
        raise InputError(f"{path}: {error.strerror}") from error
    except ValueError as error:
        raise InputError(f"{path}: {error}") from error
    if not isinstance(value, dict) or value.get("kind") != "List":
        raise InputError(f"{path}: not a List")
    return value.get("items")


def without_token(manifests):
    """The manifests with every Secret's random token the same."""
    result = copy.deepcopy(manifests)
    for manifest in result:
        if isinstance(manifest, dict) and manifest.get("kind") == "Secret":
            manifest["stringData"] = {**(manifest.get("stringData") or {}), "token": "<random>"}
    return result


def first_difference(a, b, path=""):
    """Where `a` and `b` first differ, as a path; None when they are equal.
    Types count: in Python True == 1 == 1.0, in the manifests they differ."""
    if type(a) is not type(b):
        return path or "/"
    if isinstance(a, dict):
        for key in sorted(a.keys() | b.keys(), key=str):
            if key not in a or key not in b:
                return f"{path}/{key}"
            found = first_difference(a[key], b[key], f"{path}/{key}")
            if found:
                return found
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return path or "/"
        for index, (x, y) in enumerate(zip(a, b)):
            found = first_difference(x, y, f"{path}/{index}")
            if found:
                return found
        return None
    return None if a == b else path or "/"


def check_same(yaml_path, manifests, json_path, items):
    if not isinstance(items, list) or len(items) != len(manifests):
        raise InputError(f"{json_path} does not hold the {len(manifests)} manifests of {yaml_path}")
    for index, (document, item) in enumerate(zip(without_token(manifests), without_token(items))):
        where = first_difference(document, item)
        if where:
            raise InputError(
                f"{yaml_path} and {json_path} differ in manifest {index + 1} "
                f"({name_of(document)}) at {where}"
            )


def name_of(manifest):
    metadata = manifest.get("metadata")
    name = metadata.get("name") if isinstance(metadata, dict) else None
    return f"{manifest.get('kind')}/{name}"


def main(arguments):
    if len(arguments) not in (1, 2):
        raise InputError("usage: k8s_validate.py MANIFESTS.yaml [MANIFESTS.json]")
    manifests = read_yaml(arguments[0])
    if len(arguments) == 2:
        check_same(arguments[0], manifests, arguments[1], read_list(arguments[1]))
    failed = False
    for manifest in manifests:
        problems = problems_of(manifest)
        print(f"{'INVALID' if problems else 'valid'}: {name_of(manifest)}")
        for problem in problems:
            print(f"  {problem}")
        failed = failed or bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except InputError as error:
        print(f"k8s_validate.py: {error}", file=sys.stderr)
        sys.exit(1)
