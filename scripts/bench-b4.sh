#!/usr/bin/env bash
# docs/performance.md B3 + B4: live commands on a 5,000-node / 150,000-pod cluster — peak RSS, wall time,
# and (B3) the AWS/Kubernetes calls of `drift check`.
#
#   scripts/bench-b4.sh [NODES] [PODS]          (defaults 5000 150000)
#
# Environment: COMMANDS (a subset of "provision-cold provision drift nodes nodes-no-aws", the
# default), PROFILE=release|debug (default release), BIN_DIR=DIR (use prebuilt binaries
# DIR/kubectl-karpenter and DIR/examples/*, no cargo build), PENDING (default 200), KEEP=1
# keeps the work directory (logs, outputs) and prints its path.
#
# What it does:
# 1. starts moto (tests/moto/server.py, the .venv of scripts/test) seeded with NODES running
#    instances (`--instances NODES`, cluster my-cluster) and writes their ids to a file;
# 2. starts examples/big-cluster.rs with NODES nodes whose providerIDs are those instance ids
#    (so drift check and nodes find a real instance behind every node), spread round-robin over
#    three NodePools, PODS bound pods and PENDING pending pods, written straight into its store;
# 3. applies Karpenter's v1beta1 CRDs and three NodePools + EC2NodeClasses (AL2, AL2023,
#    Bottlerocket: docs/performance.md B3's "3 node classes") with kubectl;
# 4. runs `provision --dry-run` (twice: catalog cache cold, then warm), `drift check -v`,
#    `nodes -v` and `nodes --no-aws` under /usr/bin/time and prints peak RSS, wall and CPU
#    (user + sys) time of each, plus the `-v` call summaries.
#
# Wall times are dominated by the peers: the test cluster answers each LIST page in
# O(all objects) (≈ 0.4 s per 500-pod page at 150k pods) and moto takes seconds per
# 1000-id DescribeInstances; the CPU column is the tool's own share.
#
# Needs: cargo, kubectl, /usr/bin/time, bc, and the .venv of scripts/test (moto).
set -euo pipefail
cd "$(dirname "$0")/.."
NODES=${1:-5000}
PODS=${2:-150000}
PENDING=${PENDING:-200}
COMMANDS=${COMMANDS:-provision-cold provision drift nodes nodes-no-aws}
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
    cargo build --release --quiet --bin kubectl-karpenter --example big-cluster
    BIN=target/release
else
    cargo build --quiet --bin kubectl-karpenter --example big-cluster
    BIN=target/debug
fi
[ -x .venv/bin/python ] || { echo "no .venv: run scripts/test once (it installs moto)" >&2; exit 1; }

# moto serves until its stdin closes: a FIFO held open by fd 3 closes with this script.
mkfifo "$WORK/moto.in"
exec 3<>"$WORK/moto.in"
t0=$(date +%s.%N)
.venv/bin/python tests/moto/server.py --cluster my-cluster --instances "$NODES" \
    <"$WORK/moto.in" >"$WORK/moto.out" 2>"$WORK/moto.err" 3>&- &
PIDS+=($!)
for _ in $(seq 1 600); do [ "$(wc -l <"$WORK/moto.out")" -ge 2 ] && break; sleep 0.5; done
[ "$(wc -l <"$WORK/moto.out")" -ge 2 ] || { echo "moto did not start:" >&2; cat "$WORK/moto.err" >&2; exit 1; }
MOTO=$(head -1 "$WORK/moto.out")
sed -n 2p "$WORK/moto.out" | .venv/bin/python -c \
    'import json,sys; print("\n".join(json.load(sys.stdin)["bulkInstances"]))' >"$WORK/ids"
printf 'moto up with %s instances in %.1f s\n' "$(wc -l <"$WORK/ids")" "$(echo "$(date +%s.%N) - $t0" | bc -l)"

PORT=$((20000 + RANDOM % 20000))
t0=$(date +%s.%N)
"$BIN/examples/big-cluster" --listen 127.0.0.1:$PORT --write-kubeconfig "$WORK/kubeconfig" \
    --nodes "$NODES" --pods "$PODS" --pending "$PENDING" --provider-ids "$WORK/ids" \
    --pools default,al2023,bottlerocket >"$WORK/cluster.out" 2>"$WORK/cluster.err" 3>&- &
PIDS+=($!)
for _ in $(seq 1 1200); do [ -s "$WORK/cluster.out" ] && break; sleep 0.5; done
[ -s "$WORK/cluster.out" ] || { echo "big-cluster did not start:" >&2; cat "$WORK/cluster.err" >&2; exit 1; }
printf 'big-cluster seeded in %.1f s (its RSS: %s MB)\n' "$(echo "$(date +%s.%N) - $t0" | bc -l)" \
    "$(($(awk '/VmRSS/ {print $2}' "/proc/${PIDS[1]}/status") / 1024))"

export KUBECONFIG="$WORK/kubeconfig" AWS_ENDPOINT_URL="$MOTO" AWS_REGION=us-east-1 \
    AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing XDG_CACHE_HOME="$WORK/cache" \
    NO_COLOR=1 HOME="$WORK/home"
mkdir -p "$HOME"
kubectl apply -f tests/fixtures/crds/v1beta1/ >/dev/null 2>&1
pools() {
    for spec in default:AL2 al2023:AL2023 bottlerocket:Bottlerocket; do
        name=${spec%%:*} family=${spec#*:}
        cat <<EOF
apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata:
  name: $name
spec:
  disruption:
    consolidationPolicy: WhenEmpty
    consolidateAfter: 30s
    expireAfter: Never
  template:
    spec:
      nodeClassRef:
        name: $name
      requirements:
        - key: karpenter.k8s.aws/instance-category
          operator: In
          values: ["c", "m", "r"]
        - key: kubernetes.io/arch
          operator: In
          values: ["amd64"]
        - key: karpenter.sh/capacity-type
          operator: In
          values: ["on-demand"]
---
apiVersion: karpenter.k8s.aws/v1beta1
kind: EC2NodeClass
metadata:
  name: $name
spec:
  amiFamily: $family
  role: KarpenterNodeRole-my-cluster
  securityGroupSelectorTerms:
    - tags:
        alpha.eksctl.io/cluster-name: my-cluster
  subnetSelectorTerms:
    - tags:
        alpha.eksctl.io/cluster-name: my-cluster
---
EOF
    done
}
pools | kubectl apply -f - >/dev/null

measure() {
    local label=$1
    shift
    case " $COMMANDS " in *" $label "*) ;; *) return 1 ;; esac
    /usr/bin/time -f "%M %e %U %S" -o "$WORK/time" "$BIN/kubectl-karpenter" "$@" --cluster-name my-cluster \
        >"$WORK/out.$label" 2>"$WORK/err.$label" || true
    read -r kb secs user sys < <(tail -n 1 "$WORK/time") # "Command exited with non-zero status" may come first
    printf '%-28s peak RSS %6.1f MB  wall %6.2f s  CPU %5.2f s\n' "$*" "$(echo "$kb/1024" | bc -l)" "$secs" \
        "$(echo "$user + $sys" | bc -l)"
}
echo "cluster: $NODES nodes, $PODS bound pods + $PENDING pending ($PROFILE build, $(uname -m), $(nproc) cores)"
# The first run also builds the live instance-type catalog from EC2 (DescribeInstanceTypes,
# cached in $XDG_CACHE_HOME for the runs after it): measured cold, then warm.
if measure provision-cold provision --dry-run -v; then
    echo "  (cold: the live catalog is fetched from moto and cached)"
fi
if measure provision provision --dry-run -v; then
    grep -h 'Kubernetes requests' "$WORK/err.provision" || true
    tail -n 1 "$WORK/out.provision"
fi
if measure drift drift check -v; then
    grep -h 'Kubernetes requests\|rror' "$WORK/err.drift" || true
    tail -n 1 "$WORK/out.drift"
fi
if measure nodes nodes -v; then
    grep -h 'Kubernetes requests\|warning' "$WORK/err.nodes" || true
    tail -n 1 "$WORK/out.nodes"
fi
if measure nodes-no-aws nodes --no-aws; then
    tail -n 1 "$WORK/out.nodes-no-aws"
fi
