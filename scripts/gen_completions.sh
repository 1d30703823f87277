#!/usr/bin/env bash
# Regenerates completions/kubectl-karpenter.{bash,zsh,fish,ps1} from the binary's own
# `completion SHELL` output (tests/e2e/completion.rs fails when they are stale).
#
#   scripts/gen_completions.sh                  # builds with cargo, then generates
#   scripts/gen_completions.sh path/to/kubectl-karpenter
#
# completions/kubectl_complete-karpenter (kubectl's plugin-completion helper) is hand-written;
# this script only makes sure it is executable.
set -euo pipefail
cd "$(dirname "$0")/.."

bin="${1:-}"
if [ -z "$bin" ]; then
  cargo build --quiet --bin kubectl-karpenter
  bin="${CARGO_TARGET_DIR:-target}/debug/kubectl-karpenter"
fi
[ -x "$bin" ] || { echo "gen_completions.sh: $bin is not an executable" >&2; exit 2; }

mkdir -p completions
for pair in bash:bash zsh:zsh fish:fish powershell:ps1; do
  shell="${pair%%:*}"
  out="completions/kubectl-karpenter.${pair##*:}"
  "$bin" completion "$shell" > "$out.tmp"
  mv "$out.tmp" "$out"
  echo "wrote $out"
done
chmod 0755 completions/kubectl_complete-karpenter
