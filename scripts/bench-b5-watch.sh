#!/usr/bin/env bash
# docs/performance.md B5 (watch mode): from a new pending pod to its EC2 launch, with
# `kubectl karpenter provision --watch` against the local test cluster + moto.
#
#   scripts/bench-b5-watch.sh [ROUNDS]          (default 5)
#
# Environment: PROFILE=release|debug (default release), BIN_DIR=DIR (use prebuilt binaries
# DIR/kubectl-karpenter and DIR/examples/*, no cargo build), KEEP=1 keeps the work directory.
#
# Setup: moto (`--cluster my-cluster`), the test cluster with its EC2 kubelet
# (examples/test-cluster.rs, Kubernetes 1.25: a Node registers for every running instance),
# Karpenter's v1beta1 CRDs and examples/manifests/quickstart.yaml (role fixed to the one moto
# seeds, `inflate` at 0 replicas, `limits.cpu` raised so the rounds never hit it). Then
# `provision --watch --yes` runs in the background, its stderr timestamped line by line.
#
# Each round scales `inflate` up by one (1 CPU per pod: the new pod never fits on the node of
# the previous round, so each round needs exactly one launch) and measures from the moment
# `kubectl scale` returns to the moment the watch prints `launched NodeClaim …`, which it
# prints right after CreateFleet answered. That interval is an upper bound of "pending pod →
# CreateFleet": it also contains the Deployment/ReplicaSet controllers creating the pod, the
# test cluster's scheduler marking it Unschedulable, the 200 ms pending poll, Karpenter's 1 s
# idle batch window, the snapshot + plan, and moto's CreateFleet itself. The time until the
# scheduler marked the pod Unschedulable is printed too (polled every 50 ms). The round waits for
# the pod to run on its new node before the next one starts.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-5}
PROFILE=${PROFILE:-release}
WORK=$(mktemp -d)
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    exec 3>&- 2>/dev/null || true
    if [ "${KEEP:-0}" = 1 ]; then echo "work directory kept: $WORK" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

if [ -n "${BIN_DIR:-}" ]; then
    BIN=$BIN_DIR # prebuilt: kubectl-karpenter and examples/ (a copy, safe from concurrent builds)
elif [ "$PROFILE" = release ]; then
    cargo build --release --quiet --bin kubectl-karpenter --example test-cluster
    BIN=target/release
else
    cargo build --quiet --bin kubectl-karpenter --example test-cluster
    BIN=target/debug
fi
[ -x .venv/bin/python ] || { echo "no .venv: run scripts/test once (it installs moto)" >&2; exit 1; }

now() { date +%s.%N; }
ms() { echo "($2 - $1) * 1000 / 1" | bc; }

# moto serves until its stdin closes: a FIFO held open by fd 3 closes with this script.
mkfifo "$WORK/moto.in"
exec 3<>"$WORK/moto.in"
.venv/bin/python tests/moto/server.py --cluster my-cluster \
    <"$WORK/moto.in" >"$WORK/moto.out" 2>"$WORK/moto.err" 3>&- &
PIDS+=($!)
for _ in $(seq 1 240); do [ "$(wc -l <"$WORK/moto.out")" -ge 2 ] && break; sleep 0.5; done
[ "$(wc -l <"$WORK/moto.out")" -ge 2 ] || { echo "moto did not start:" >&2; cat "$WORK/moto.err" >&2; exit 1; }
MOTO=$(head -1 "$WORK/moto.out")

PORT=$((20000 + RANDOM % 20000))
"$BIN/examples/test-cluster" --listen 127.0.0.1:$PORT --kubernetes-version 1.25 \
    --ec2-endpoint "$MOTO" --region us-east-1 --write-kubeconfig "$WORK/kubeconfig" \
    >"$WORK/cluster.out" 2>"$WORK/cluster.err" 3>&- &
PIDS+=($!)
for _ in $(seq 1 100); do grep -q serving "$WORK/cluster.err" 2>/dev/null && break; sleep 0.1; done

export KUBECONFIG="$WORK/kubeconfig" AWS_ENDPOINT_URL="$MOTO" AWS_REGION=us-east-1 \
    AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing XDG_CACHE_HOME="$WORK/cache" \
    NO_COLOR=1 HOME="$WORK/home"
mkdir -p "$HOME"
kubectl apply -f tests/fixtures/crds/v1beta1/ >/dev/null 2>&1
sed -e 's/karpenterNodeRole-my-cluster/KarpenterNodeRole-my-cluster/' \
    -e 's/replicas: 5/replicas: 0/' -e 's/cpu: "10"/cpu: "1000"/' examples/manifests/quickstart.yaml |
    kubectl apply -f - >/dev/null

# The watch, its stderr timestamped per line (the reader ends when the watch does).
"$BIN/kubectl-karpenter" provision --watch --yes --cluster-name my-cluster \
    2> >(while IFS= read -r line; do printf '%s %s\n' "$(date +%s.%N)" "$line"; done >"$WORK/watch.err") \
    >"$WORK/watch.out" 3>&- &
PIDS+=($!)
for _ in $(seq 1 100); do grep -q watching "$WORK/watch.err" 2>/dev/null && break; sleep 0.1; done
grep -q watching "$WORK/watch.err" || { echo "the watch did not start:" >&2; cat "$WORK/watch.err" >&2; exit 1; }
sleep 3 # past its first emptiness pass

unschedulable() {
    kubectl get pods -l app=inflate -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="PodScheduled")].reason}{"\n"}{end}' |
        grep -c Unschedulable || true
}
running() {
    kubectl get pods -l app=inflate --field-selector=status.phase=Running -o name | wc -l
}

echo "watch latency, $PROFILE build, $(nproc) cores: scale → Unschedulable → 'launched NodeClaim'"
results=()
for i in $(seq 1 "$ROUNDS"); do
    kubectl scale deployment inflate --replicas "$i" >/dev/null
    t0=$(now)
    t_unsched=""
    t_launch=""
    for _ in $(seq 1 600); do
        [ -z "$t_unsched" ] && [ "$(unschedulable)" -ge 1 ] && t_unsched=$(now)
        count=$(grep -c 'launched NodeClaim' "$WORK/watch.err" || true)
        if [ "$count" -ge "$i" ]; then
            t_launch=$(grep 'launched NodeClaim' "$WORK/watch.err" | sed -n "${i}p" | cut -d' ' -f1)
            break
        fi
        sleep 0.05
    done
    [ -n "$t_launch" ] || { echo "round $i: no launch within 30 s" >&2; cat "$WORK/watch.err" >&2; exit 1; }
    total=$(ms "$t0" "$t_launch")
    results+=("$total")
    printf 'round %d: Unschedulable after %s ms, launched after %d ms  (%s)\n' "$i" \
        "$([ -n "$t_unsched" ] && ms "$t0" "$t_unsched" || echo '?')" "$total" \
        "$(grep 'launched NodeClaim' "$WORK/watch.err" | sed -n "${i}p" | cut -d' ' -f2-)"
    for _ in $(seq 1 600); do [ "$(running)" -ge "$i" ] && break; sleep 0.1; done
    [ "$(running)" -ge "$i" ] || { echo "round $i: pod not running within 60 s" >&2; exit 1; }
done
sorted=$(printf '%s\n' "${results[@]}" | sort -n)
n=${#results[@]}
median=$(echo "$sorted" | sed -n "$(((n + 1) / 2))p")
max=$(echo "$sorted" | tail -1)
echo "median ${median} ms, max ${max} ms over $n rounds (target ≤ 1500 ms)"
