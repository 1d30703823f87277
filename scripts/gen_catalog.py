#!/usr/bin/env python3
"""Generate catalog/aws-snapshot.json, the embedded EC2 instance-type catalog.

Why: `kubectl karpenter provision -f` must work with no AWS access (docs/spec.md 5.4),
so the binary embeds a snapshot of what DescribeInstanceTypes and
DescribeInstanceTypeOfferings would return, plus us-east-1 on-demand list prices.

What: the instance data and per-zone offerings are read from the EC2 API
responses that moto (pinned in scripts/requirements-test.txt) bundles — the same
data the moto-backed tests serve — and reduced to the facts Karpenter's AWS
provider uses (docs/karpenter.md 2.2, 6.2, 6.3).  Selection is Karpenter's: every type
that supports HVM and x86_64 or arm64.  Prices come from a separate public price
list, by default catalog/on-demand-prices-us-east-1.json (AWS's public on-demand
Linux list prices for us-east-1; its "source" field says as of when), or a path
given as an argument; only the prices flow into the snapshot.  Types moto lacks that
Karpenter's tests and users name (g4ad, dl1) come from catalog/supplement-instance-types.json:
InstanceTypeInfo objects this project wrote from public facts (sources per type), offered where
moto offers a named sibling type; moto's data wins for any name it has.

The output is deterministic (sorted keys, sorted lists, no timestamps, one
instance type / offering per line) so regenerating it gives a readable diff.

Usage:
  .venv/bin/python scripts/gen_catalog.py            # (re)write the snapshot
  .venv/bin/python scripts/gen_catalog.py --check    # exit 1 if it is stale
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import re
import sys
from importlib import metadata
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = REPO_ROOT / "catalog" / "aws-snapshot.json"
DEFAULT_PRICES = REPO_ROOT / "catalog" / "on-demand-prices-us-east-1.json"
SUPPLEMENT = REPO_ROOT / "catalog" / "supplement-instance-types.json"
# Every commercial region moto bundles offerings for (`--regions all`); GovCloud and China are
# other partitions, with other prices, and moto has no data for them.
DEFAULT_REGIONS = "all"
PRICE_REGION = "us-east-1"
SCHEMA_VERSION = 1

# AWS architecture name -> Kubernetes `kubernetes.io/arch` (Karpenter's AWSToKubeArchitectures).
KUBE_ARCH = {"x86_64": "amd64", "arm64": "arm64"}
# Capacity types Karpenter builds offerings for; e.g. `capacity-block` is ignored.
USAGE_CLASSES = ("on-demand", "spot")
# "200 Gigabit", "16x 100 Gigabit" (a fixed total; "Up to 12.5 Gigabit" is a burst peak).
FIXED_PERFORMANCE = re.compile(r"^(?:(\d+)x )?(\d+(?:\.\d+)?) Gigabit$")


# ---------------------------------------------------------------- moto's data


def moto_version() -> str:
    return metadata.version("moto")


def moto_resources() -> Path:
    import moto.ec2  # imported here so `--help` works without moto

    return Path(moto.ec2.__file__).resolve().parent / "resources"


def load_json(path: Path):
    """Load `path`, or `path.gz` (moto ships its resources gzipped)."""
    if path.exists():
        return json.loads(path.read_text())
    gz = path.with_name(path.name + ".gz")
    with gzip.open(gz, "rt") as f:
        return json.load(f)


def load_instance_types(resources: Path) -> dict:
    """DescribeInstanceTypes InstanceTypeInfo objects, keyed by type name."""
    return load_json(resources / "instance_types.json")


def bundled_regions(resources: Path) -> list:
    """The regions moto has DescribeInstanceTypeOfferings data for."""
    folder = resources / "instance_type_offerings" / "availability-zone"
    return sorted(p.name.split(".")[0] for p in folder.glob("*.json*"))


def load_zone_offerings(resources: Path, region: str) -> list:
    """DescribeInstanceTypeOfferings(LocationType=availability-zone) for a region."""
    path = resources / "instance_type_offerings" / "availability-zone" / f"{region}.json"
    return load_json(path)


def load_prices(path: Path) -> tuple[dict, str]:
    """us-east-1 on-demand prices {type: usd_per_hour} and the list's as-of date."""
    doc = json.loads(path.read_text())
    prices = doc["regions"][PRICE_REGION]
    found = re.search(r"\d{4}-\d{2}(?:-\d{2})?", doc.get("source", ""))
    return prices, (found.group(0) if found else "undated")


def load_supplement(path: Path, moto_names) -> dict:
    """The supplement's entries for types moto does not have: {name: {"info", "zonesLike", "regions"?}}."""
    if not path.exists():
        return {}
    entries = json.loads(path.read_text())["instanceTypes"]
    return {name: e for name, e in entries.items() if name not in moto_names}


def with_supplement(offerings: list, region: str, supplement: dict) -> list:
    """The region's offerings plus each supplement type in the zones of its `zonesLike` sibling."""
    zones_of: dict = {}
    for o in offerings:
        zones_of.setdefault(o["InstanceType"], set()).add(o["Location"])
    extra = [{"InstanceType": name, "Location": zone}
             for name, e in sorted(supplement.items()) if region in e.get("regions", [region])
             for zone in sorted(zones_of.get(e["zonesLike"], ()))]
    return offerings + extra


# ------------------------------------------------------- per-type conversion


def lower_kebab(s: str) -> str:
    """Karpenter's lowerKabobCase: lowercase, spaces -> '-'."""
    return s.replace(" ", "-").lower()


def go_round(x: float) -> int:
    """Round half away from zero like Go's math.Round (Python's round is banker's)."""
    return int(math.copysign(math.floor(abs(x) + 0.5), x))


def kube_architectures(info: dict) -> list:
    archs = info.get("ProcessorInfo", {}).get("SupportedArchitectures", [])
    return sorted({KUBE_ARCH[a] for a in archs if a in KUBE_ARCH})


def is_selected(info: dict) -> bool:
    """Karpenter's DescribeInstanceTypes filter: HVM and x86_64 or arm64."""
    return "hvm" in info.get("SupportedVirtualizationTypes", []) and bool(kube_architectures(info))


def default_card(network: dict) -> dict:
    index = network.get("DefaultNetworkCardIndex", 0)
    for card in network.get("NetworkCards", []):
        if card.get("NetworkCardIndex") == index:
            return card
    return {}


def max_enis(network: dict):
    """ENIs on the default network card (what the VPC CNI uses), else the top-level limit."""
    return default_card(network).get("MaximumNetworkInterfaces", network.get("MaximumNetworkInterfaces"))


def network_cards(network: dict):
    """MaximumNetworkInterfaces of each network card, at its NetworkCardIndex (the cards are
    0..n-1 in EC2's data); what the provider's networkInterfaces compatibility check reads."""
    cards = sorted(network.get("NetworkCards", []), key=lambda c: c.get("NetworkCardIndex", 0))
    if [c.get("NetworkCardIndex") for c in cards] != list(range(len(cards))):
        return None
    return [c.get("MaximumNetworkInterfaces", 0) for c in cards]


def network_bandwidth_mbps(network: dict):
    """Instance baseline bandwidth in Mbps (Karpenter's instance-network-bandwidth).

    Per-card baselines are summed, except when NetworkPerformance states a fixed
    total: for some multi-card types the API repeats the instance total on every
    card (m6idn.32xlarge: 2 cards x 200 Gbps for a 200 Gbps instance).
    """
    fixed = FIXED_PERFORMANCE.match(network.get("NetworkPerformance", ""))
    if fixed:
        return go_round(int(fixed.group(1) or 1) * float(fixed.group(2)) * 1000)
    baselines = [c["BaselineBandwidthInGbps"] for c in network.get("NetworkCards", []) if "BaselineBandwidthInGbps" in c]
    return go_round(sum(baselines) * 1000) if baselines else None


def gpu(info: dict):
    """Only when the type has exactly one GPU model, like Karpenter's GPU labels.

    memoryMiB is per GPU (GpuInfo.Gpus[0].MemoryInfo.SizeInMiB), which is what
    Karpenter puts in karpenter.k8s.aws/instance-gpu-memory.
    """
    gpus = info.get("GpuInfo", {}).get("Gpus", [])
    if len(gpus) != 1:
        return None
    g = gpus[0]
    return drop_none({
        "name": lower_kebab(g["Name"]),
        "manufacturer": lower_kebab(g["Manufacturer"]),
        "count": g["Count"],
        "memoryMiB": g.get("MemoryInfo", {}).get("SizeInMiB"),
    })


def accelerator(info: dict):
    """Neuron devices (manufacturer aws) win over InferenceAcceleratorInfo, as in Karpenter."""
    neuron = info.get("NeuronInfo", {}).get("NeuronDevices", [])
    if len(neuron) == 1:
        return {"name": lower_kebab(neuron[0]["Name"]), "manufacturer": "aws", "count": neuron[0]["Count"]}
    if "NeuronInfo" in info:
        return None
    accels = info.get("InferenceAcceleratorInfo", {}).get("Accelerators", [])
    if len(accels) == 1:
        a = accels[0]
        return {"name": lower_kebab(a["Name"]), "manufacturer": lower_kebab(a["Manufacturer"]), "count": a["Count"]}
    return None


def ebs_bandwidth_mbps(info: dict):
    """Max EBS bandwidth, only when the type is EBS-optimized by default (as Karpenter)."""
    ebs = info.get("EbsInfo", {})
    if ebs.get("EbsOptimizedSupport") != "default":
        return None
    return ebs.get("EbsOptimizedInfo", {}).get("MaximumBandwidthInMbps")


def sustained_clock_mhz(info: dict):
    ghz = info.get("ProcessorInfo", {}).get("SustainedClockSpeedInGhz")
    return None if ghz is None else go_round(ghz * 1000)


def local_storage(info: dict) -> tuple[int, bool]:
    storage = info.get("InstanceStorageInfo")
    if not storage:
        return 0, False
    return storage.get("TotalSizeInGB", 0), storage.get("NvmeSupport", "unsupported") != "unsupported"


def drop_none(d: dict) -> dict:
    return {k: v for k, v in d.items() if v is not None}


def convert(info: dict, price) -> dict:
    """One InstanceTypeInfo -> one snapshot entry (optional fields omitted when unknown)."""
    network = info.get("NetworkInfo", {})
    processor = info.get("ProcessorInfo", {})
    storage_gb, nvme = local_storage(info)
    manufacturer = processor.get("Manufacturer")
    return drop_none({
        "name": info["InstanceType"],
        "vcpu": info["VCpuInfo"]["DefaultVCpus"],
        "memoryMiB": info["MemoryInfo"]["SizeInMiB"],
        "architectures": kube_architectures(info),
        "hypervisor": info.get("Hypervisor"),
        "bareMetal": info.get("BareMetal", False),
        "currentGeneration": info.get("CurrentGeneration", False),
        "maxEnis": max_enis(network),
        "ipv4PerEni": network.get("Ipv4AddressesPerInterface"),
        "efaMaxInterfaces": network.get("EfaInfo", {}).get("MaximumEfaInterfaces", 0),
        "networkCards": network_cards(network),
        "enaSupport": network.get("EnaSupport"),
        # EC2NodeClass compatibility (aws v1.14.1 compatibility.go): placementGroupCompatibility
        # and nestedVirtualizationCompatibility read these; always written (an empty list is a fact).
        "placementGroupStrategies": sorted(info.get("PlacementGroupInfo", {}).get("SupportedStrategies", [])),
        "processorFeatures": sorted(processor.get("SupportedFeatures", [])),
        "gpu": gpu(info),
        "accelerator": accelerator(info),
        "localStorageGB": storage_gb,
        "localNvme": nvme,
        "cpuManufacturer": lower_kebab(manufacturer) if manufacturer else None,
        "sustainedClockSpeedMhz": sustained_clock_mhz(info),
        "ebsBandwidthMbps": ebs_bandwidth_mbps(info),
        "networkBandwidthMbps": network_bandwidth_mbps(network),
        "encryptionInTransit": network.get("EncryptionInTransitSupported", False),
        "usageClasses": sorted(set(info.get("SupportedUsageClasses", [])) & set(USAGE_CLASSES)),
        "onDemandPrice": price,
    })


# --------------------------------------------------------------- the snapshot


def region_entry(offerings: list, selected: set) -> dict:
    """{"zones": [...], "offerings": {type: [zones]}} for the selected types offered in the region."""
    zones = sorted({o["Location"] for o in offerings})
    by_type: dict = {}
    for o in offerings:
        if o["InstanceType"] in selected:
            by_type.setdefault(o["InstanceType"], set()).add(o["Location"])
    return {"zones": zones, "offerings": {t: sorted(z) for t, z in sorted(by_type.items())}}


def build_snapshot(prices_path: Path, regions, supplement_path: Path = SUPPLEMENT) -> dict:
    resources = moto_resources()
    infos = load_instance_types(resources)
    supplement = load_supplement(supplement_path, infos.keys())
    infos = {**infos, **{name: e["info"] for name, e in supplement.items()}}
    prices, price_date = load_prices(prices_path)
    selected = sorted(name for name, info in infos.items() if is_selected(info))
    added = f"; {len(supplement)} types from {supplement_path.name}" if supplement else ""
    return {
        "schemaVersion": SCHEMA_VERSION,
        "source": (f"moto {moto_version()} DescribeInstanceTypes/DescribeInstanceTypeOfferings{added}; "
                   f"on-demand prices {PRICE_REGION} {price_date}"),
        "instanceTypes": [convert(infos[name], prices.get(name)) for name in selected],
        "regions": {r: region_entry(with_supplement(load_zone_offerings(resources, r), r, supplement), set(selected))
                    for r in sorted(regions)},
    }


def dumps(value) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def zone_letters(region: dict):
    """A type's zones as the letters after the region's name (`"abcdf"`), which the Rust side
    expands (`snapshot.rs` `RegionFile`), when every zone of the region is its name and one
    letter; else None (the zones are written out)."""
    zones = region["zones"]
    prefix = zones[0][:-1] if zones else ""
    if not zones or any(len(z) != len(prefix) + 1 or not z.startswith(prefix) for z in zones):
        return None
    return lambda names: "".join(z[-1] for z in names)


def render(snapshot: dict) -> str:
    """Valid, deterministic JSON: sorted keys, one instance type / offering per line."""

    def block(items):
        return ",\n".join(items)

    regions = []
    for name, region in sorted(snapshot["regions"].items()):
        compact = zone_letters(region) or (lambda names: names)
        offerings = block(f"{dumps(t)}:{dumps(compact(z))}" for t, z in region["offerings"].items())
        regions.append(f'{dumps(name)}:{{"offerings":{{\n{offerings}\n}},\n"zones":{dumps(region["zones"])}}}')
    return (
        "{\n"
        f'"instanceTypes":[\n{block(dumps(t) for t in snapshot["instanceTypes"])}\n],\n'
        f'"regions":{{\n{block(regions)}\n}},\n'
        f'"schemaVersion":{dumps(snapshot["schemaVersion"])},\n'
        f'"source":{dumps(snapshot["source"])}\n'
        "}\n"
    )


def summary(snapshot: dict, size: int) -> str:
    types = snapshot["instanceTypes"]
    priced = sum(1 for t in types if "onDemandPrice" in t)
    regions = ", ".join(f"{r} {len(v['zones'])} zones/{len(v['offerings'])} types"
                        for r, v in snapshot["regions"].items())
    return f"gen_catalog: {len(types)} instance types, {priced} priced; regions: {regions}; {size} bytes"


# -------------------------------------------------------------------- --check


def diff_summary(old_text: str, new: dict) -> str:
    """One line saying how the committed snapshot differs from a fresh one."""
    try:
        old = json.loads(old_text)
    except ValueError as e:
        return f"is not valid JSON ({e})"
    parts = []
    if old.get("source") != new["source"]:
        parts.append(f"source {old.get('source')!r} -> {new['source']!r}")
    if old.get("schemaVersion") != new["schemaVersion"]:
        parts.append(f"schemaVersion {old.get('schemaVersion')} -> {new['schemaVersion']}")
    old_types = {t.get("name"): t for t in old.get("instanceTypes", [])}
    new_types = {t["name"]: t for t in new["instanceTypes"]}
    added = sorted(new_types.keys() - old_types.keys())
    removed = sorted(old_types.keys() - new_types.keys())
    changed = sorted(n for n in new_types.keys() & old_types.keys() if new_types[n] != old_types[n])
    for label, names in (("added", added), ("removed", removed), ("changed", changed)):
        if names:
            parts.append(f"{len(names)} types {label} ({', '.join(names[:3])}{', ...' if len(names) > 3 else ''})")
    old_regions = old.get("regions", {})
    regions = sorted(r for r in old_regions.keys() | new["regions"].keys()
                     if old_regions.get(r) != new["regions"].get(r))
    if regions:
        parts.append(f"regions differ: {', '.join(regions)}")
    return "; ".join(parts) if parts else "formatting differs (same content)"


def check(output: Path, text: str, snapshot: dict) -> int:
    if not output.exists():
        print(f"{output} is missing; run scripts/gen_catalog.py", file=sys.stderr)
        return 1
    old_text = output.read_text()
    if old_text == text:
        print(f"{output} is up to date", file=sys.stderr)
        return 0
    print(f"{output} is stale: {diff_summary(old_text, snapshot)}; run scripts/gen_catalog.py", file=sys.stderr)
    return 1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("prices", nargs="?", type=Path, default=DEFAULT_PRICES,
                        help=f"on-demand price list JSON (default: {DEFAULT_PRICES})")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="snapshot path")
    parser.add_argument("--regions", default=DEFAULT_REGIONS,
                        help="comma-separated regions, or `all` moto bundles (default: %(default)s)")
    parser.add_argument("--check", action="store_true",
                        help="do not write; exit 1 if the snapshot differs from a fresh one")
    args = parser.parse_args(argv)

    if not args.prices.exists():
        print(f"price list not found: {args.prices}", file=sys.stderr)
        return 2
    regions = [r.strip() for r in args.regions.split(",") if r.strip()]
    if regions == ["all"]:
        regions = bundled_regions(moto_resources())
    snapshot = build_snapshot(args.prices, regions)
    text = render(snapshot)
    print(summary(snapshot, len(text.encode())), file=sys.stderr)
    if args.check:
        return check(args.output, text, snapshot)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text)
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
