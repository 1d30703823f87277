#!/usr/bin/env bash
# docs/performance.md B7, live and from files: `consolidate` (the report: emptiness, multi-node,
# single-node, every node's reason) over the same cluster read two ways — from the local test
# cluster, and from the manifests it was seeded with — with peak RSS, wall and CPU time of each,
# and whether the two reports agree.
#
#   scripts/bench-b7-live.sh [NODES]          (default 5000: 149,212 pods, three NodePools)
#
# Environment: BIN_DIR=DIR (prebuilt DIR/kubectl-karpenter and DIR/examples/{big-cluster,
# b7_manifests}; default: build them, release), KEEP=1 keeps the work directory.
#
# What it does:
# 1. `examples/b7_manifests NODES DIR` writes the cluster (NodePools, the EC2NodeClass, Nodes,
#    NodeClaims with status, bound Pods: one JSON object per line) and a catalog of 400 types;
# 2. starts `examples/big-cluster` holding exactly those objects (`--objects`, after Karpenter's
#    v1 CRDs from tests/fixtures/crds/v1), written straight into its store;
# 3. runs `consolidate --catalog … -o json` against it (no AWS: prices and types from the
#    catalog) and `consolidate -f … -o json` on the files, under /usr/bin/time.
#
# Live wall time is mostly the test cluster's: it answers each LIST page in O(all objects). The
# CPU column is the tool's own share.
#
# Needs: cargo, /usr/bin/time, bc.
set -euo pipefail
cd "$(dirname "$0")/.."

NODES=${1:-5000}
WORK=$(mktemp -d)
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    if [ "${KEEP:-}" = 1 ]; then echo "work directory: $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

if [ -n "${BIN_DIR:-}" ]; then
    BIN=$BIN_DIR
else
    cargo build --release --locked --bin kubectl-karpenter --example big-cluster --example b7_manifests
    BIN=${CARGO_TARGET_DIR:-target}/release
fi

"$BIN/examples/b7_manifests" "$NODES" "$WORK/b7" >/dev/null

PORT=$((20000 + RANDOM % 20000))
t0=$(date +%s.%N)
"$BIN/examples/big-cluster" --listen 127.0.0.1:$PORT --write-kubeconfig "$WORK/kubeconfig" \
    --nodes 0 --pods 0 --pending 0 --objects "$WORK/b7/cluster.json" --crds tests/fixtures/crds/v1 \
    >"$WORK/cluster.out" 2>"$WORK/cluster.err" 3>&- &
PIDS+=($!)
for _ in $(seq 1 1200); do [ -s "$WORK/cluster.out" ] && break; sleep 0.5; done
[ -s "$WORK/cluster.out" ] || { echo "big-cluster did not start:" >&2; cat "$WORK/cluster.err" >&2; exit 1; }
printf 'big-cluster seeded in %.1f s: %s\n' "$(echo "$(date +%s.%N) - $t0" | bc -l)" "$(head -1 "$WORK/cluster.err")"

export KUBECONFIG="$WORK/kubeconfig" NO_COLOR=1 HOME="$WORK/home" XDG_CACHE_HOME="$WORK/cache"
mkdir -p "$HOME"
COMMON=(--catalog "$WORK/b7/catalog.yaml" --region us-east-1 --now 2026-01-01T00:00:00Z -o json)

measure() {
    local label=$1
    shift
    /usr/bin/time -f "%M %e %U %S" -o "$WORK/time" "$BIN/kubectl-karpenter" "$@" \
        >"$WORK/out.$label" 2>"$WORK/err.$label" || true
    read -r kb secs user sys < <(tail -n 1 "$WORK/time") # "Command exited with non-zero status" may come first
    printf '%-6s peak RSS %6.1f MB  wall %6.2f s  CPU %5.2f s\n' "$label" "$(echo "$kb/1024" | bc -l)" "$secs" \
        "$(echo "$user + $sys" | bc -l)"
}
echo "B7 at $NODES nodes ($(uname -m), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg))"
measure live consolidate "${COMMON[@]}"
measure files consolidate -f "$WORK/b7/cluster.json" "${COMMON[@]}"
for label in live files; do
    grep -q '"kind": "ConsolidationReport"' "$WORK/out.$label" ||
        { echo "$label: no report:" >&2; head -c 600 "$WORK/err.$label" >&2; exit 1; }
done
if cmp -s "$WORK/out.live" "$WORK/out.files"; then
    echo "the two reports are identical ($(sha256sum <"$WORK/out.live" | cut -c1-16))"
else
    echo "the reports differ:"
    diff "$WORK/out.live" "$WORK/out.files" | head -20 || true
fi
