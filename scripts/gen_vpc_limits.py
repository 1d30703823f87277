#!/usr/bin/env python3
"""Generate catalog/vpc-limits.tsv, the VPC resource controller's per-type limits that
Karpenter's AWS provider compiles in.

Why: Karpenter gives an instance type `vpc.amazonaws.com/pod-eni` capacity (security groups
for pods) equal to its branch-ENI count when the type is trunking-compatible, else 0, and on
Windows `vpc.amazonaws.com/PrivateIPv4Address` = IPv4 addresses per interface - 1 for a type
the table lists, else 0 (aws v1.14.1 pkg/providers/instancetype/types.go `awsPodENI`,
`privateIPv4Address`). Neither number is in DescribeInstanceTypes: both come from the table
`Limits` in pkg/providers/instancetype/zz_generated.vpclimits.go, which AWS generates from the
VPC resource controller's data. The binary embeds the same table (src/cloud/catalog/vpc_limits.rs)
so the embedded and the live catalog give the capacity Karpenter v1.14.1 gives.

What: one line per type of `Limits`, sorted: name, branch ENIs (0 when the type is not
trunking-compatible: `IsTrunkingCompatible` is true exactly when `BranchInterface` > 0 in
v1.14.1, which the script checks), IPv4 addresses per interface. Nothing else of the table
changes capacity or requirements in v1.14.1 (ENI-limited max pods, hypervisor and bare metal
come from DescribeInstanceTypes). The header names the source repository, file, tag and the
table's own generation time; the output has no other timestamp, so regenerating gives a
readable diff.

The table is Apache-2.0 (Copyright Amazon.com Inc. or its affiliates), as this project.

Usage:
  python3 scripts/gen_vpc_limits.py --repo PATH            # (re)write the table
  python3 scripts/gen_vpc_limits.py --repo PATH --check    # exit 1 if it is stale
PATH is a clone (bare or not) of https://github.com/aws/karpenter-provider-aws.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path
from typing import Callable

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = REPO_ROOT / "catalog" / "vpc-limits.tsv"
DEFAULT_TAG = "v1.14.1"
SOURCE_FILE = "pkg/providers/instancetype/zz_generated.vpclimits.go"

ENTRY = re.compile(r'^\t"([^"]+)": \{\n(.*?)^\t\},$', re.S | re.M)
GENERATED_AT = re.compile(r"^// This file was generated at (\S+)$", re.M)


def field(body: str, name: str, pattern: str = r"(\d+)") -> str:
    """The value of a top-level field of one `VPCLimits` literal (two tabs deep)."""
    m = re.search(rf"^\t\t{name}:\s+{pattern},?$", body, re.M)
    if not m:
        raise SystemExit(f"{SOURCE_FILE}: an entry has no {name} field")
    return m.group(1)


def parse(go: str) -> tuple[str, list[tuple[str, int, int]]]:
    generated = GENERATED_AT.search(go)
    if not generated:
        raise SystemExit(f"{SOURCE_FILE}: no 'This file was generated at' line")
    rows = []
    for name, body in ENTRY.findall(go):
        trunking = field(body, "IsTrunkingCompatible", r"(true|false)") == "true"
        branch = int(field(body, "BranchInterface"))
        ipv4 = int(field(body, "IPv4PerInterface"))
        if trunking != (branch > 0):
            raise SystemExit(
                f"{SOURCE_FILE}: {name}: IsTrunkingCompatible={trunking} with "
                f"BranchInterface={branch}; the two-column encoding no longer holds"
            )
        rows.append((name, branch if trunking else 0, ipv4))
    if len(rows) < 100:
        raise SystemExit(f"{SOURCE_FILE}: only {len(rows)} entries parsed; has the format changed?")
    return generated.group(1), sorted(rows)


def render(tag: str, generated: str, rows: list[tuple[str, int, int]]) -> str:
    lines = [
        "# VPC resource controller limits per EC2 instance type, as Karpenter's AWS provider "
        "compiles them in.",
        f"# Source: github.com/aws/karpenter-provider-aws {tag}: {SOURCE_FILE} (`Limits`),",
        f"# generated there at {generated}. Apache-2.0, Copyright Amazon.com Inc. or its affiliates.",
        "# Written by scripts/gen_vpc_limits.py; do not edit.",
        "# Columns: instance type, branch ENIs (vpc.amazonaws.com/pod-eni; 0 = not "
        "trunking-compatible), IPv4 addresses per interface.",
    ]
    lines += [f"{name}\t{branch}\t{ipv4}" for name, branch, ipv4 in rows]
    return "\n".join(lines) + "\n"


def run_generator(doc: str, source_file: str, default_output: Path, script: str,
                  make_text: Callable[[str, str], tuple[str, str]]) -> int:
    """The command line of a generator of a table read from one file of the aws provider
    (`--repo PATH [--tag T] [--output F] [--check]`): `make_text(go source, tag)` gives the
    table's text and a one-line summary. Shared with scripts/gen_network_bandwidth.py."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--repo", required=True, type=Path,
                        help="a clone of aws/karpenter-provider-aws (bare or not)")
    parser.add_argument("--tag", default=DEFAULT_TAG)
    parser.add_argument("--output", type=Path, default=default_output)
    parser.add_argument("--check", action="store_true", help="exit 1 if the output is stale")
    args = parser.parse_args()
    go = subprocess.run(
        ["git", "-C", str(args.repo), "show", f"{args.tag}:{source_file}"],
        check=True, capture_output=True, text=True,
    ).stdout
    text, summary = make_text(go, args.tag)
    if args.check:
        if args.output.read_text() != text:
            print(f"{args.output} is stale: run scripts/{script}", file=sys.stderr)
            return 1
        return 0
    args.output.write_text(text)
    print(f"wrote {args.output}: {summary}", file=sys.stderr)
    return 0


def make_text(go: str, tag: str) -> tuple[str, str]:
    generated, rows = parse(go)
    return (render(tag, generated, rows),
            f"{len(rows)} types, {sum(1 for r in rows if r[1] > 0)} trunking-compatible")


if __name__ == "__main__":
    sys.exit(run_generator(__doc__, SOURCE_FILE, DEFAULT_OUTPUT, "gen_vpc_limits.py", make_text))
