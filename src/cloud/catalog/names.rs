//! What an instance type's name says: Karpenter's category and generation scheme, the
//! architecture of AWS family names, and the labels a custom catalog entry derives from its name.
//!
//! Mirrors `aws v1.14.1: pkg/providers/instancetype/types.go` (`instanceTypeScheme`).

use std::collections::BTreeMap;

use crate::model::labels;

use super::aws::INSTANCE_CAPABILITY_FLEX;

/// Karpenter's `instanceTypeScheme` `(^[a-z]+)(\-[0-9]+tb)?([0-9]+).*\.`: the category
/// (group 1) and generation (group 3) of an instance type name, e.g. `("m", "5")` for
/// `m5.large`, `("u", "1")` for `u-6tb1.metal`.
pub fn category_and_generation(name: &str) -> Option<(&str, &str)> {
    let letters = name.bytes().take_while(u8::is_ascii_lowercase).count();
    if letters == 0 {
        return None;
    }
    let rest = &name[letters..];
    // The optional `-<n>tb` group is tried first, as the regex does.
    let with_tb = rest.strip_prefix('-').and_then(|s| {
        let digits = s.bytes().take_while(u8::is_ascii_digit).count();
        (digits > 0)
            .then(|| s[digits..].strip_prefix("tb"))
            .flatten()
    });
    for candidate in with_tb.into_iter().chain([rest]) {
        let digits = candidate.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && candidate[digits..].contains('.') {
            return Some((&name[..letters], &candidate[..digits]));
        }
    }
    None
}

/// The architecture an AWS instance type name implies: arm64 for Graviton families (a `g` among
/// the attribute letters after the generation: `m6g`, `c7gn`, `r8gd`, `is4gen`), `a1` and the
/// Apple-silicon `mac2` Macs; amd64 otherwise.
pub fn arch_from_name(name: &str) -> &'static str {
    let family = name.split('.').next().unwrap_or(name);
    if family == "a1" || family.starts_with("mac2") {
        return "arm64";
    }
    let attributes = category_and_generation(name).and_then(|(_, generation)| {
        let at = family.find(generation).map(|i| i + generation.len())?;
        Some(family[at..].split('-').next().unwrap_or(""))
    });
    if attributes.is_some_and(|a| a.contains('g')) {
        "arm64"
    } else {
        "amd64"
    }
}

/// The labels an AWS-style name implies (for custom catalogs): instance type, arch, os `linux`,
/// category, generation, family, size and capability-flex where the name has that shape.
pub fn labels_from_name(name: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut put = |k: &str, v: &str| {
        out.insert(k.to_string(), v.to_string());
    };
    put(labels::INSTANCE_TYPE, name);
    put(labels::ARCH, arch_from_name(name));
    put(labels::OS, "linux");
    if let Some((category, generation)) = category_and_generation(name) {
        put(labels::INSTANCE_CATEGORY, category);
        put(labels::INSTANCE_GENERATION, generation);
    }
    if let Some((family, size)) = name.split_once('.').filter(|(_, s)| !s.contains('.')) {
        put(labels::INSTANCE_FAMILY, family);
        put(labels::INSTANCE_SIZE, size);
        put(
            INSTANCE_CAPABILITY_FLEX,
            if family.contains("-flex") {
                "true"
            } else {
                "false"
            },
        );
    }
    out
}
