#!/usr/bin/env bash
# slurm_etcd_example_test.sh STRATA SOURCE_DIR
#
# Runs examples/slurm/elastic-etcd.sbatch as Slurm would on two nodes of two
# workers, with a real etcd: a stand-in `srun` starts the batch step's
# command once per node with that node's SLURM_NODEID (both nodes on this
# machine), and `strata` is the build's. The job must form one world of 4
# (dp 3 x tp 2 fitted to dp 2 by the elastic policy) and train its steps.
set -euo pipefail
strata=$1
source_dir=$2
work=$(mktemp -d)
etcd_pid=
cleanup() {
  if [ -n "$etcd_pid" ]; then { kill -9 "$etcd_pid" && wait "$etcd_pid"; } 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
client=$(free_port)
peer=$(free_port)
etcd --name slurm-test --data-dir "$work/etcd" \
  --listen-client-urls "http://127.0.0.1:$client" --advertise-client-urls "http://127.0.0.1:$client" \
  --listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
  --initial-cluster "slurm-test=http://127.0.0.1:$peer" >"$work/etcd.log" 2>&1 &
etcd_pid=$!
for _ in $(seq 300); do
  (exec 3<>"/dev/tcp/127.0.0.1/$client") 2>/dev/null && break
  sleep 0.1
done

mkdir -p "$work/bin"
ln -s "$(readlink -f "$strata")" "$work/bin/strata"
# srun: its own options dropped, the command run once per node, in parallel.
cat >"$work/bin/srun" <<'SRUN'
#!/usr/bin/env bash
while [[ $# -gt 0 && $1 == --* ]]; do shift; done
pids=()
for ((node = 0; node < SLURM_NNODES; ++node)); do
  SLURM_NODEID=$node SLURM_PROCID=$node SLURM_LOCALID=0 "$@" >"node$node.log" 2>&1 &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
exit $status
SRUN
chmod +x "$work/bin/srun"

cat >"$work/tiny.toml" <<'TOML'
[model]
layers = 2
hidden = 32
heads = 2
ffn = 64
vocab = 256
context = 32

[train]
steps = 4
warmup_steps = 1
micro_batch = 4
seq_len = 32
log_every = 1
eval_every = 0

[data]
corpus_bytes = 20000
TOML

cd "$work"
status=0
PATH="$work/bin:$PATH" SLURM_JOB_ID=4242 SLURM_JOB_NAME=elastic SLURM_NNODES=2 \
  STRATA_ETCD="127.0.0.1:$client" STRATA_CONFIG="$work/tiny.toml" \
  STRATA_CHECKPOINTS="$work/checkpoints" \
  timeout 300 bash "$source_dir/examples/slurm/elastic-etcd.sbatch" || status=$?
for log in node0.log node1.log; do
  echo "== $log"
  cat "$log"
done
[ "$status" -eq 0 ] || { echo "the batch script failed with $status" >&2; exit 1; }
grep -q "world size 4" node0.log || { echo "no world of 4 on node 0" >&2; exit 1; }
grep -q "running pp 1 x dp 2 x tp 2 (policy dp)" node0.log node1.log ||
  { echo "the elastic policy did not fit dp 2" >&2; exit 1; }
grep -q "step 4/4" node0.log node1.log || { echo "the job did not train 4 steps" >&2; exit 1; }
grep -q "rendezvous at etcd at 127.0.0.1:$client (run id slurm-4242)" node0.log ||
  { echo "node 0 did not meet the others in etcd" >&2; exit 1; }
echo "the Slurm example trained under etcd"
