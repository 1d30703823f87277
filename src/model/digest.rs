//! A stable digest for names derived from content (launch templates, client tokens, NodeClaim
//! names): the same parts give the same name in every build and on every platform, unlike
//! `DefaultHasher`.

/// FNV-1a, 64 bits, seeded; each part ends with a NUL so `["ab", "c"]` ≠ `["a", "bc"]`.
fn fnv(seed: u64, parts: &[&str]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64 ^ seed;
    for p in parts {
        for b in p.bytes().chain(std::iter::once(0)) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// A 64-bit digest of `parts`.
pub fn digest64(parts: &[&str]) -> u64 {
    fnv(0, parts)
}

/// A 128-bit hex digest of `parts`.
pub fn digest(parts: &[&str]) -> String {
    format!(
        "{:016x}{:016x}",
        fnv(0, parts),
        fnv(0x9e37_79b9_7f4a_7c15, parts)
    )
}
