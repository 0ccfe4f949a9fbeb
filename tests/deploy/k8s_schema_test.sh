#!/usr/bin/env bash
# k8s_schema_test.sh STRATA SCENARIO
#
# Runs the real `strata k8s` for one SCENARIO, as YAML and as JSON, and
# validates every manifest against the Kubernetes API schemas with
# k8s_validate.py, on the python of the project's environment
# (scripts/python-env.sh; the fixture K8sSchema.InstallValidator makes it
# once, before the scenarios run side by side). The scenario
# RefusesBrokenManifests breaks one field at a time in printed manifests and
# expects the validator to name it, so a validator that lets everything
# through fails too.
set -euo pipefail
strata=$1
scenario=$2
here=$(cd "$(dirname "$0")" && pwd)
python=$(bash "$here/../../scripts/python-env.sh")
validator=$here/k8s_validate.py
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# pp 2 x dp 2 x tp 2: every scenario has 8 workers.
cat >"$work/train.toml" <<'TOML'
[model]
layers = 4
hidden = 64
heads = 4
ffn = 128

[parallel]
pp = 2
dp = 2
tp = 2

[train]
global_batch = 8
micro_batch = 1
seq_len = 32

[checkpoint]
every = 10
TOML

render() {
  "$strata" k8s --config "$work/train.toml" --image registry.example/strata:0.5 "$@"
}

validate() {
  render "$@" >"$work/manifests.yaml"
  render "$@" --output json >"$work/manifests.json"
  "$python" "$validator" "$work/manifests.yaml" "$work/manifests.json"
}

# expect_refused NAME SED_SCRIPT MESSAGE: the manifests NAME.yaml edited by
# SED_SCRIPT are refused, naming MESSAGE.
expect_refused() {
  sed "$2" "$work/$1.yaml" >"$work/broken.yaml"
  if cmp -s "$work/$1.yaml" "$work/broken.yaml"; then
    echo "the edit '$2' changed nothing in $1.yaml" >&2
    return 1
  fi
  if output=$("$python" "$validator" "$work/broken.yaml"); then
    echo "k8s_validate.py accepted $1.yaml edited by '$2':" >&2
    echo "$output" >&2
    return 1
  fi
  grep -qF -- "$3" <<<"$output" ||
    { echo "k8s_validate.py refused '$2' without naming '$3':" >&2; echo "$output" >&2; return 1; }
  echo "refused as expected: '$2' -> $3"
}

refuses_broken_manifests() {
  render --nodes 2 --workers-per-node 4 >"$work/job.yaml"
  render --flavor pytorchjob --nodes 2 --workers-per-node 4 >"$work/pytorchjob.yaml"
  expect_refused job 's/containerPort: 29500/containerPort: "29500"/' \
    "/containers/0/ports/0/containerPort: '29500' is not of type 'integer'"
  expect_refused job 's/completionMode: Indexed/completionMode: Sometimes/' \
    "/spec/completionMode: 'Sometimes' is not one of ['NonIndexed', 'Indexed']"
  expect_refused job 's/subdomain:/subdomian:/' \
    "/spec/template/spec: Additional properties are not allowed ('subdomian' was unexpected)"
  expect_refused job 's/medium: Memory/medium: 42/' "/emptyDir/medium: 42 is not of type 'string'"
  # YAML 1.1, as kubectl reads it: yes is a boolean.
  expect_refused job 's/clusterIP: None/clusterIP: yes/' \
    "/spec/clusterIP: True is not of type 'string'"
  expect_refused pytorchjob 's/restartPolicy: Never/restartPolicy: Sometimes/' \
    "/Master/restartPolicy: 'Sometimes' is not one of ['Always', 'OnFailure', 'Never', 'ExitCode']"
  expect_refused pytorchjob 's/name: pytorchjob-port/name: rendezvous/' \
    '/Master/template: container pytorch has no port named pytorchjob-port'
  expect_refused pytorchjob 's/nprocPerNode:/nprocsPerNode:/' \
    "/spec: Additional properties are not allowed ('nprocsPerNode' was unexpected)"
  expect_refused pytorchjob 's/mountPath: \/dev\/shm/mountPath: [1]/' \
    "/Master/template/spec/containers/0/volumeMounts/0/mountPath: [1] is not of type 'string'"
}

case $scenario in
  IndexedJob)
    validate --nodes 2 --workers-per-node 4 --cpu 2 --memory 8Gi --gpus-per-worker 1 \
      --namespace research --max-restarts 3 ;;
  UnevenIndexedJobs)
    validate --nodes 3 --workers-per-node 4,2,2 --checkpoint-claim shared --shm-size 512Mi \
      --name uneven ;;
  PyTorchJob)
    validate --flavor pytorchjob --nodes 4 --workers-per-node 2 --max-restarts 2 \
      --storage-class nfs --checkpoint-size 1Ti ;;
  UnevenPyTorchJob)
    validate --flavor pytorchjob --nodes 3 --workers-per-node 4,2,2 --cpu 500m --port 23456 ;;
  EtcdRendezvous)
    validate --nodes 3 --workers-per-node 4,2,2 --rdzv-backend etcd \
      --rdzv-endpoint etcd-0.etcd:2379,etcd-1.etcd:2379 --rdzv-id run-6
    validate --flavor pytorchjob --nodes 2 --workers-per-node 4 --rdzv-backend etcd \
      --rdzv-endpoint etcd.infra.svc:2379 --rdzv-id run-7 ;;
  RefusesBrokenManifests)
    refuses_broken_manifests ;;
  *)
    echo "unknown scenario $scenario" >&2
    exit 2 ;;
esac
