#!/usr/bin/env bash
# PERF.md B4: peak RSS of live commands on a 5,000-node / 150,000-pod cluster.
#
#   scripts/bench-b4.sh [NODES] [PODS]
#
# Starts moto (EC2/SSM) and the seeded test cluster (examples/big-cluster.rs), applies
# Karpenter's CRDs + a NodePool/EC2NodeClass with kubectl, then runs
# `kubectl karpenter provision --dry-run` and `drift check` under /usr/bin/time -v and prints
# their peak RSS and wall time. Needs the .venv of scripts/test (moto) and a release build.
set -euo pipefail
cd "$(dirname "$0")/.."
NODES=${1:-5000}
PODS=${2:-150000}
WORK=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$WORK"' EXIT

cargo build --release --quiet --bin kubectl-karpenter --example big-cluster
.venv/bin/python tests/moto/server.py --cluster my-cluster >"$WORK/moto.out" 2>/dev/null < <(sleep 100000) &
for _ in $(seq 1 120); do [ -s "$WORK/moto.out" ] && break; sleep 0.5; done
MOTO=$(head -1 "$WORK/moto.out")
PORT=$((20000 + RANDOM % 20000))
./target/release/examples/big-cluster --listen 127.0.0.1:$PORT --write-kubeconfig "$WORK/kubeconfig" \
    --nodes "$NODES" --pods "$PODS" >"$WORK/cluster.out" 2>"$WORK/cluster.err" &
for _ in $(seq 1 600); do [ -s "$WORK/cluster.out" ] && break; sleep 0.5; done
export KUBECONFIG="$WORK/kubeconfig" AWS_ENDPOINT_URL="$MOTO" AWS_REGION=us-east-1 \
    AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing XDG_CACHE_HOME="$WORK/cache" NO_COLOR=1
kubectl apply -f ../shared/data/crds/v1beta1/ >/dev/null 2>&1
sed 's/karpenterNodeRole-my-cluster/KarpenterNodeRole-my-cluster/' examples/manifests/quickstart.yaml |
    kubectl apply -f - >/dev/null
measure() {
    /usr/bin/time -f "%M %e" -o "$WORK/time" ./target/release/kubectl-karpenter "$@" --cluster-name my-cluster \
        >"$WORK/out" 2>"$WORK/err" || true
    read -r kb secs <"$WORK/time"
    printf '%-40s peak RSS %6.1f MB  wall %5.2f s\n' "$*" "$(echo "$kb/1024" | bc -l)" "$secs"
}
echo "cluster: $NODES nodes, $PODS bound pods + 200 pending ($(uname -m), $(nproc) cores)"
measure provision --dry-run
tail -2 "$WORK/out"
measure drift check
tail -1 "$WORK/out"
