#!/usr/bin/env bash
# docs/performance.md B6: replacement pace — `drift replace` of NODES drifted nodes with the NodePool budget
# `nodes: 10%`, against the local test cluster + moto. Reports how many nodes were disrupted
# (cordoned and not yet deleted) at once over time: the peak (must never exceed the budget) and
# the time-weighted mean while the replacement ran (how full the budget was kept).
#
#   scripts/bench-b6-replace.sh [NODES]          (default 100, as docs/performance.md asks)
#
# Environment: PROFILE=release|debug (default release), BIN_DIR=DIR (use prebuilt binaries
# DIR/kubectl-karpenter and DIR/examples/*, no cargo build), BUDGET (default 10%), KEEP=1 keeps the
# work directory (watch log, JSON report).
#
# Setup: moto + the test cluster with its EC2 kubelet, Karpenter's v1beta1 CRDs, one NodePool
# (c 2xlarge on-demand amd64, `budgets: [{nodes: BUDGET}]`) and NODES pods of 6 CPU (one per
# node); `provision --yes --wait` launches NODES nodes. Narrowing the pool's instance category
# to `m` drifts every node (RequirementsDrifted); then `drift replace --yes --max-parallel NODES`
# runs (so only the budget limits it) while `kubectl get nodes -w` is recorded, timestamped.
set -euo pipefail
cd "$(dirname "$0")/.."
NODES=${1:-100}
BUDGET=${BUDGET:-10%}
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
kubectl apply -f - >/dev/null <<EOF
apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata:
  name: default
spec:
  disruption:
    consolidationPolicy: WhenEmpty
    consolidateAfter: 10m
    expireAfter: Never
    budgets:
    - nodes: "$BUDGET"
  limits:
    cpu: "100000"
  template:
    metadata:
      labels:
        eks-immersion-team: my-team
    spec:
      nodeClassRef:
        name: default
      requirements:
      - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c]}
      - {key: karpenter.k8s.aws/instance-size, operator: In, values: [2xlarge]}
      - {key: kubernetes.io/arch, operator: In, values: [amd64]}
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
---
apiVersion: karpenter.k8s.aws/v1beta1
kind: EC2NodeClass
metadata:
  name: default
spec:
  amiFamily: AL2
  role: KarpenterNodeRole-my-cluster
  securityGroupSelectorTerms:
  - tags: {alpha.eksctl.io/cluster-name: my-cluster}
  subnetSelectorTerms:
  - tags: {alpha.eksctl.io/cluster-name: my-cluster}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: inflate
spec:
  replicas: $NODES
  selector:
    matchLabels: {app: inflate}
  template:
    metadata:
      labels: {app: inflate}
    spec:
      terminationGracePeriodSeconds: 0
      containers:
      - name: inflate
        image: public.ecr.aws/eks-distro/kubernetes/pause:3.7
        resources: {requests: {cpu: "6"}}
      nodeSelector: {eks-immersion-team: my-team}
EOF
team_nodes() { kubectl get nodes -l eks-immersion-team=my-team --no-headers 2>/dev/null | wc -l; }
running() { kubectl get pods -l app=inflate --field-selector=status.phase=Running -o name | wc -l; }
for _ in $(seq 1 300); do
    [ "$(kubectl get pods -l app=inflate -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="PodScheduled")].reason}{"\n"}{end}' | grep -c Unschedulable || true)" -ge "$NODES" ] && break
    sleep 0.2
done
t0=$(now)
"$BIN/kubectl-karpenter" provision --yes --wait --timeout 10m --cluster-name my-cluster \
    >"$WORK/provision.out" 2>"$WORK/provision.err" ||
    { echo "provision failed:" >&2; tail -5 "$WORK/provision.err" >&2; exit 1; }
for _ in $(seq 1 600); do [ "$(running)" -ge "$NODES" ] && break; sleep 0.2; done
printf 'setup: %s nodes, %s pods Running (provision --wait: %.1f s)\n' "$(team_nodes)" "$(running)" \
    "$(echo "$(now) - $t0" | bc -l)"

kubectl patch nodepool default --type json \
    -p '[{"op":"replace","path":"/spec/template/spec/requirements/0/values","value":["m"]}]' >/dev/null
"$BIN/kubectl-karpenter" drift check --cluster-name my-cluster >"$WORK/check.out" 2>&1 || true
echo "drifted before: $(grep -c RequirementsDrifted "$WORK/check.out" || true)"

kubectl get nodes -l eks-immersion-team=my-team -w --output-watch-events --no-headers 2>/dev/null 3>&- \
    > >(while IFS= read -r line; do printf '%s %s\n' "$(date +%s.%N)" "$line"; done >"$WORK/watch.log") &
WATCH=$!
PIDS+=("$WATCH")
sleep 2
t0=$(now)
rc=0
"$BIN/kubectl-karpenter" drift replace --yes --max-parallel "$NODES" --cluster-name my-cluster -o json \
    >"$WORK/replace.json" 2>"$WORK/replace.err" || rc=$?
t1=$(now)
if [ "$rc" != 0 ]; then
    echo "drift replace exited $rc: $(grep -i '^error' "$WORK/replace.err" | tail -n 1)"
fi
sleep 1
kill "$WATCH" 2>/dev/null || true
sleep 0.5

.venv/bin/python - "$WORK/watch.log" "$WORK/replace.json" "$t0" "$t1" "$NODES" "$BUDGET" <<'EOF'
import json, math, sys
log, report, t0, t1, nodes, budget = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
limit = math.ceil(nodes * float(budget[:-1]) / 100) if budget.endswith("%") else int(budget)
disrupted, events, peak, last_start = set(), [], 0, None
for line in open(log):
    cols = line.split()
    if len(cols) < 4:
        continue
    ts, event, name, status = float(cols[0]), cols[1], cols[2], cols[3]
    if event == "DELETED" or "SchedulingDisabled" not in status:
        disrupted.discard(name)
    else:
        if name not in disrupted:
            last_start = ts
        disrupted.add(name)
    peak = max(peak, len(disrupted))
    events.append((ts, len(disrupted)))
# Time-weighted mean of disrupted nodes from the first cordon to the last deletion.
first = next((t for t, n in events if n > 0), None)
last = max((t for t, n in events if n > 0), default=None)
area, prev_t, prev_n = 0.0, None, 0
for t, n in events:
    if prev_t is not None and first is not None and prev_t >= first:
        area += prev_n * (t - prev_t)
    prev_t, prev_n = t, n
try:
    doc = json.load(open(report))
except ValueError:
    doc = {}
span = (events[-1][0] - first) if first else 0
print(f"drift replace: {t1 - t0:.1f} s wall for {nodes} nodes; summary {doc.get('summary')}")
print(f"budget {budget} of {nodes} nodes = {limit}; peak disrupted at once: {peak} "
      f"({'never exceeded' if peak <= limit else 'EXCEEDED'})")
if first:
    # the end of the span: the last change in the disrupted set
    end = max(t for t, _ in events)
    full = sum((events[i + 1][0] - t) for i, (t, n) in enumerate(events[:-1]) if n >= limit and t >= first)
    print(f"from first cordon to last deletion: {end - first:.1f} s; mean disrupted {area / (end - first):.2f} "
          f"of {limit} ({100 * area / (end - first) / limit:.0f}% of the budget used); budget full {100 * full / (end - first):.0f}% of that time")
    # While nodes were still waiting (until the last one started), every free slot is a gap.
    def window(lo, hi):
        area_w, full_w = 0.0, 0.0
        for i, (t, n) in enumerate(events[:-1]):
            a, b = max(t, lo), min(events[i + 1][0], hi)
            if b > a:
                area_w += n * (b - a)
                full_w += (b - a) if n >= limit else 0.0
        return area_w / (hi - lo), 100 * full_w / (hi - lo)
    if last_start and last_start > first:
        mean_w, full_w = window(first, last_start)
        print(f"while nodes waited (first cordon to last cordon, {last_start - first:.1f} s): mean disrupted "
              f"{mean_w:.2f} of {limit}; budget full {full_w:.0f}% of that time")
EOF
