#!/usr/bin/env python3
"""Generates src/api/schema/generated.rs: every field name the API server knows, per object
type, for the kinds kubectl-karpenter reads — so an unknown field (a typo) is refused with its
path and a did-you-mean, as `kubectl apply`'s strict field validation does.

Sources:
- Kubernetes core kinds: the type definitions of the `k8s-openapi` crate (generated from the
  Kubernetes OpenAPI spec), newest Kubernetes version it carries, from the cargo registry.
- Karpenter kinds: the CRDs vendored in tests/fixtures/crds (their openAPIV3Schema).

The Karpenter kinds' `required` lists come along (REQUIRED): what the API server refuses an
object without on create — outside `status` (dropped on create: every vendored CRD has a status
subresource) and without the fields a `default` fills first (defaulting runs before
validation). The Kubernetes kinds' are left out on purpose (docs/commands.md "Input").

Run: .venv/bin/python scripts/gen_field_schema.py   (needs PyYAML, which moto brings)
"""
import glob
import os
import re
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "src", "api", "schema", "generated.rs")

# kind -> k8s-openapi type (module path under src/vX_Y, type name).
CORE_ROOTS = {
    "Pod": "api::core::v1::Pod",
    "Node": "api::core::v1::Node",
    "Namespace": "api::core::v1::Namespace",
    "ReplicationController": "api::core::v1::ReplicationController",
    "Deployment": "api::apps::v1::Deployment",
    "ReplicaSet": "api::apps::v1::ReplicaSet",
    "StatefulSet": "api::apps::v1::StatefulSet",
    "DaemonSet": "api::apps::v1::DaemonSet",
    "Job": "api::batch::v1::Job",
    "PodDisruptionBudget": "api::policy::v1::PodDisruptionBudget",
    "RuntimeClass": "api::node::v1::RuntimeClass",
    "LimitRange": "api::core::v1::LimitRange",
    "PersistentVolume": "api::core::v1::PersistentVolume",
    "PersistentVolumeClaim": "api::core::v1::PersistentVolumeClaim",
    "StorageClass": "api::storage::v1::StorageClass",
    "CSINode": "api::storage::v1::CSINode",
    "PodTemplate": "api::core::v1::PodTemplate",
    "PriorityClass": "api::scheduling::v1::PriorityClass",
}


def k8s_openapi_dir():
    home = os.environ.get("CARGO_HOME", os.path.expanduser("~/.cargo"))
    crates = sorted(glob.glob(os.path.join(home, "registry/src/*/k8s-openapi-0.*")))
    if not crates:
        sys.exit("k8s-openapi not found in the cargo registry: run `cargo fetch` first")
    versions = sorted(
        glob.glob(os.path.join(crates[-1], "src", "v1_*")),
        key=lambda p: int(p.rsplit("_", 1)[1]),
    )
    return crates[-1], versions[-1]


class Types:
    """Interned object types: a type is a sorted tuple of (field, shape, child type id), and the
    sorted names of its required fields."""

    def __init__(self):
        self.ids = {}
        self.table = []
        self.required = []

    def intern(self, fields, required=()):
        key = (tuple(sorted(fields)), tuple(sorted(required)))
        if key not in self.ids:
            self.ids[key] = len(self.table)
            self.table.append(key[0])
            self.required.append(key[1])
        return self.ids[key]


def parse_k8s_openapi(version_dir):
    """{"api::core::v1::PodSpec": [(json name, rust type text)]} for every generated struct."""
    structs = {}
    for path in glob.glob(os.path.join(version_dir, "**", "*.rs"), recursive=True):
        text = open(path, encoding="utf-8").read()
        m = re.search(r"^pub struct (\w+) \{(.*?)^\}", text, re.S | re.M)
        if not m:
            continue
        name, body = m.group(1), m.group(2)
        rel = os.path.relpath(os.path.dirname(path), version_dir).replace(os.sep, "::")
        rust_types = dict(re.findall(r"^\s*pub (\w+): (.+),$", body, re.M))
        fields = []
        for json_name, rust_name in re.findall(r'"([^"]+)" => Field::Key_(\w+),', text):
            fields.append((json_name, rust_types.get(rust_name, "")))
        if fields:
            structs[f"{rel}::{name}"] = fields
    return structs


def core_types(types, structs):
    cache = {}

    def shape_of(rust):
        rust = rust.strip()
        m = re.fullmatch(r"Option<(.*)>", rust)
        if m:
            rust = m.group(1)
        m = re.fullmatch(r"std::vec::Vec<(.*)>", rust)
        if m:
            return "List", m.group(1)
        m = re.fullmatch(r"std::collections::BTreeMap<std::string::String, (.*)>", rust)
        if m:
            return "Map", m.group(1)
        return "One", rust

    def type_id(name):
        if name in cache:
            return cache[name]
        cache[name] = None  # recursion guard (JSONSchemaProps-like self references)
        fields = []
        for json_name, rust in structs[name]:
            shape, inner = shape_of(rust)
            child = None
            if inner.startswith("crate::"):
                target = inner[len("crate::"):]
                if target in structs:
                    child = type_id(target)
            fields.append((json_name, shape if child is not None else "Leaf", child))
        cache[name] = types.intern(fields)
        return cache[name]

    return {kind: type_id(path) for kind, path in CORE_ROOTS.items()}


def crd_types(types):
    roots = {}

    def type_id(schema, enforced=True):
        if schema.get("x-kubernetes-preserve-unknown-fields"):
            return None
        props = schema.get("properties")
        if not props:
            return None
        fields = []
        for name, sub in props.items():
            shape, inner = "One", sub
            if sub.get("type") == "array" and "items" in sub:
                shape, inner = "List", sub["items"]
            elif sub.get("type") == "object" and isinstance(sub.get("additionalProperties"), dict):
                shape, inner = "Map", sub["additionalProperties"]
            # Nothing under the root's `status` is required on create (the API server drops it).
            child = type_id(inner, enforced and not (schema is root_schema and name == "status"))
            fields.append((name, shape if child is not None else "Leaf", child))
        required = []
        if enforced:
            required = [r for r in schema.get("required", []) if "default" not in props.get(r, {})]
        return types.intern(fields, required)

    root_schema = None

    for path in sorted(glob.glob(os.path.join(ROOT, "tests", "fixtures", "crds", "*", "*.yaml"))):
        for doc in yaml.safe_load_all(open(path, encoding="utf-8")):
            if not doc or doc.get("kind") != "CustomResourceDefinition":
                continue
            spec = doc["spec"]
            for v in spec["versions"]:
                schema = v["schema"]["openAPIV3Schema"]
                schema.setdefault("properties", {})
                for meta in ("apiVersion", "kind"):
                    schema["properties"].setdefault(meta, {"type": "string"})
                key = f'{spec["group"]}/{v["name"]}/{spec["names"]["kind"]}'
                # The v0.37 CRDs under v1beta1/ also serve a pre-1.0 v1: each version's schema
                # comes from the directory named after it (v1/ holds v1.14.1's).
                own = os.path.basename(os.path.dirname(path)) == v["name"]
                if key in roots and not own:
                    continue
                root_schema = schema
                roots[key] = (type_id(schema), os.path.relpath(path, ROOT))
    return roots


def main():
    crate, version_dir = k8s_openapi_dir()
    types = Types()
    structs = parse_k8s_openapi(version_dir)
    core = core_types(types, structs)
    crds = crd_types(types)
    # A Karpenter object's metadata is an ObjectMeta (the CRD schema leaves it open).
    meta_id = next(c for n, _, c in types.table[core["Pod"]] if n == "metadata")

    def patched(tid):
        fields = [
            (n, ("One", meta_id) if n == "metadata" else (s, c)) for n, s, c in types.table[tid]
        ]
        return types.intern([(n, s, c) for n, (s, c) in fields], types.required[tid])

    crds = {k: (patched(tid), src) for k, (tid, src) in crds.items()}

    source = os.path.basename(crate) + "/src/" + os.path.basename(version_dir)
    out = []
    out.append("//! Generated by `scripts/gen_field_schema.py` — do not edit. Every field name the API")
    out.append(f"//! server knows, per object type: Kubernetes kinds from `{source}`")
    out.append("//! (the Kubernetes OpenAPI definitions), Karpenter kinds from the CRDs in")
    out.append("//! `tests/fixtures/crds/`. Each type is its fields sorted by name: (name, shape, child).")
    out.append("")
    out.append("use super::{Field, Shape::*};")
    out.append("")
    out.append("/// The root type of each kind: `Kind` for Kubernetes kinds, `group/version/Kind` for CRDs.")
    out.append("pub(super) const ROOTS: &[(&str, u16)] = &[")
    for kind in sorted(core):
        out.append(f'    ("{kind}", {core[kind]}),')
    for key in sorted(crds):
        out.append(f'    ("{key}", {crds[key][0]}),')
    out.append("];")
    out.append("")
    out.append("/// The types, by id.")
    out.append("pub(super) const TYPES: &[&[Field]] = &[")
    for tid, fields in enumerate(types.table):
        parts = []
        for name, shape, child in fields:
            parts.append(f'Field("{name}", {shape}, {child if child is not None else 0})')
        out.append(f"    /* {tid} */ &[{', '.join(parts)}],")
    out.append("];")
    out.append("")
    out.append("/// The required fields of the types that have any (Karpenter kinds only, not under")
    out.append("/// `status`, without the ones a `default` fills), by type id.")
    out.append("pub(super) const REQUIRED: &[(u16, &[&str])] = &[")
    for tid, required in enumerate(types.required):
        if required:
            names = ", ".join(f'"{r}"' for r in required)
            out.append(f"    ({tid}, &[{names}]),")
    out.append("];")
    with open(OUT, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")
    print(f"{OUT}: {len(types.table)} types, {len(core)} Kubernetes kinds, {len(crds)} CRD versions")


if __name__ == "__main__":
    main()
