//! Kubernetes resource quantities, held exactly as integer milli-units.
//!
//! Every resource in this crate (CPU, memory, pods, extended resources) is an `i64` count of
//! thousandths of the base unit: `"1"` CPU is `1000`, `"100m"` is `100`, `"1Gi"` of memory is
//! `1073741824000`. One representation for all resources keeps arithmetic exact and uniform, and
//! `i64` milli-units still cover 8 PiB. Like the API server, values finer than a milli-unit are
//! rounded up. The API server takes values up to 2^63−1 units (`resource.Quantity` in
//! `k8s.io/apimachinery`, `MaxInt64` as the cap of `Value()`); those beyond `i64` milli-units are
//! held as `i64::MAX` — "more than any node has" — and arithmetic on them saturates.

use std::fmt;

/// Why a string is not a Kubernetes quantity.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QuantityError {
    /// The text does not follow the quantity grammar (`<signedNumber><suffix>`).
    #[error("invalid quantity {0:?}: expected a number with an optional suffix (m, k, M, G, Ki, Mi, Gi, …)")]
    Syntax(String),
    /// The value does not fit in the supported range.
    #[error("quantity {0:?} is too large")]
    Overflow(String),
}

/// Parses a quantity into milli-units, rounding up any fraction of a milli-unit.
///
/// Accepts the full grammar of `k8s.io/apimachinery/pkg/api/resource`: optional sign, decimal
/// digits with an optional fraction, then a binary suffix (`Ki`…`Ei`), a decimal suffix
/// (`n`, `u`, `m`, `k`, `M`, `G`, `T`, `P`, `E`) or a decimal exponent (`e3`, `E-2`).
pub fn parse_milli(text: &str) -> Result<i64, QuantityError> {
    let syntax = || QuantityError::Syntax(text.to_string());
    let overflow = || QuantityError::Overflow(text.to_string());
    let s = text.trim();
    if s.is_empty() {
        return Err(syntax());
    }
    let (negative, rest) = match s.as_bytes()[0] {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let number_end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let (number, suffix) = rest.split_at(number_end);
    let (int_part, frac_part) = match number.split_once('.') {
        Some((i, f)) => (i, f),
        None => (number, ""),
    };
    if int_part.is_empty() && frac_part.is_empty() || frac_part.contains('.') {
        return Err(syntax());
    }
    // The mantissa as an integer scaled by 10^-frac_digits.
    let digits: String = format!("{int_part}{frac_part}");
    let digits = digits.trim_start_matches('0');
    if digits.len() > 30 {
        return Err(overflow());
    }
    let mantissa: i128 = if digits.is_empty() {
        0
    } else {
        digits.parse().map_err(|_| syntax())?
    };
    let frac_digits = frac_part.len() as i32;

    // value = mantissa * 10^(dec_exp - frac_digits) * 2^(bin_exp), then * 1000 for milli-units.
    let (dec_exp, bin_exp): (i32, u32) = match suffix {
        "" => (0, 0),
        "n" => (-9, 0),
        "u" => (-6, 0),
        "m" => (-3, 0),
        "k" => (3, 0),
        "M" => (6, 0),
        "G" => (9, 0),
        "T" => (12, 0),
        "P" => (15, 0),
        "E" => (18, 0),
        "Ki" => (0, 10),
        "Mi" => (0, 20),
        "Gi" => (0, 30),
        "Ti" => (0, 40),
        "Pi" => (0, 50),
        "Ei" => (0, 60),
        exp if exp.starts_with(['e', 'E']) => {
            let e: i32 = exp[1..].parse().map_err(|_| syntax())?;
            if !(-40..=40).contains(&e) {
                return Err(overflow());
            }
            (e, 0)
        }
        _ => return Err(syntax()),
    };
    if mantissa == 0 {
        return Ok(0);
    }
    let exp10 = dec_exp - frac_digits + 3;
    let mut value: i128 = mantissa.checked_shl(bin_exp).ok_or_else(overflow)?;
    if value >> bin_exp != mantissa {
        return Err(overflow());
    }
    if exp10 >= 0 {
        let scale = 10i128.checked_pow(exp10 as u32).ok_or_else(overflow)?;
        value = value.checked_mul(scale).ok_or_else(overflow)?;
    } else {
        let scale = 10i128.checked_pow((-exp10) as u32).ok_or_else(overflow)?;
        // Round away from zero, as resource.Quantity.MilliValue does.
        value = (value + scale - 1) / scale;
    }
    // Beyond 2^63−1 whole units the API server refuses the quantity too.
    if value > i128::from(i64::MAX) * 1000 {
        return Err(overflow());
    }
    let value = if negative { -value } else { value };
    Ok(i64::try_from(value).unwrap_or(if negative { i64::MIN } else { i64::MAX }))
}

/// [`format_milli`] for people: a byte quantity that is no whole number of binary units
/// (`2791728742`, an instance type's ephemeral storage after reservations) gets its rough size
/// beside it (`2791728742 (~2.6Gi)`); anything else is unchanged.
pub fn format_milli_readable(resource: &str, milli: i64) -> String {
    let exact = format_milli(resource, milli);
    let units = milli / 1000;
    // A suffix (`Gi`, `G`, `over 8Pi`) means it already reads as a size; `Ki` and `k` do not
    // when the number is large ("262623299Ki", session 32's 300G root volume).
    let small_suffix = exact.ends_with("Ki") || exact.ends_with('k');
    let whole = exact.ends_with(|c: char| c.is_ascii_alphabetic()) && !small_suffix;
    if !is_byte_resource(resource) || whole || units < 1 << 20 {
        return exact;
    }
    let (suffix, shift) = [("Ei", 60), ("Pi", 50), ("Ti", 40), ("Gi", 30), ("Mi", 20)]
        .into_iter()
        .find(|(_, shift)| units >= 1i64 << shift)
        .unwrap_or(("Mi", 20));
    let size = units as f64 / (1i64 << shift) as f64;
    format!("{exact} (~{size:.1}{suffix})")
}

/// Formats milli-units the way a person reads the resource: CPU as cores or millicores, byte
/// resources with the largest exact binary suffix, counts as integers.
pub fn format_milli(resource: &str, milli: i64) -> String {
    if milli == i64::MAX {
        // A quantity held saturated (see the module doc): say what it is at least.
        return if is_byte_resource(resource) {
            "over 8Pi".into()
        } else {
            "over 9P".into()
        };
    }
    if milli % 1000 != 0 {
        return format!("{milli}m");
    }
    let units = milli / 1000;
    if is_byte_resource(resource) && units != 0 {
        let binary = [
            ("Ei", 60),
            ("Pi", 50),
            ("Ti", 40),
            ("Gi", 30),
            ("Mi", 20),
            ("Ki", 10),
        ]
        .into_iter()
        .map(|(suffix, shift)| (suffix, 1i64 << shift))
        .find(|(_, div)| units % div == 0);
        // A size written with a decimal suffix (`100G`, `2G`, `500M`: common in requests and
        // volume sizes) reads back in it, not as `97656250Ki`: the decimal form when it is the
        // shorter one, from `M` up (`1000` bytes stays `1000`, `1000Mi` stays `1000Mi`).
        let decimal = [
            ("E", 1_000_000_000_000_000_000i64),
            ("P", 1_000_000_000_000_000),
            ("T", 1_000_000_000_000),
            ("G", 1_000_000_000),
            ("M", 1_000_000),
        ]
        .into_iter()
        .find(|(_, div)| units % div == 0);
        match (binary, decimal) {
            (Some((_, bd)), Some((d, dd))) if units / dd < units / bd => {
                return format!("{}{d}", units / dd);
            }
            (Some((suffix, div)), _) | (None, Some((suffix, div))) => {
                return format!("{}{suffix}", units / div);
            }
            (None, None) => {}
        }
    }
    units.to_string()
}

/// Resources measured in bytes (formatted with binary suffixes).
pub fn is_byte_resource(resource: &str) -> bool {
    resource == "memory" || resource == "ephemeral-storage" || resource.starts_with("hugepages-")
}

/// A parsed quantity that remembers nothing but its exact value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Quantity(pub i64);

impl Quantity {
    /// Parses a quantity string.
    pub fn parse(text: &str) -> Result<Self, QuantityError> {
        parse_milli(text).map(Quantity)
    }
    /// The value in milli-units.
    pub fn milli(self) -> i64 {
        self.0
    }
    /// The value in whole base units, rounded up (like `resource.Quantity.Value`).
    pub fn value_ceil(self) -> i64 {
        self.0.div_euclid(1000) + i64::from(self.0.rem_euclid(1000) != 0)
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_milli("", self.0))
    }
}

/// Milli-units of one base unit (`"1"`).
pub const ONE: i64 = 1000;
/// Milli-units of one MiB.
pub const MIB: i64 = 1000 << 20;
/// Milli-units of one GiB.
pub const GIB: i64 = 1000 << 30;

#[cfg(test)]
mod tests {
    use super::*;

    /// A reason said "largest available after overhead: 2791728742" (s30-sweep16): the exact
    /// quantity stays, its rough size joins it; whole binary units and other resources as before.
    #[test]
    fn an_odd_byte_quantity_is_said_with_its_rough_size() {
        let f = |r, units: i64| format_milli_readable(r, units * 1000);
        assert_eq!(f("ephemeral-storage", 2791728742), "2791728742 (~2.6Gi)");
        assert_eq!(f("memory", 3 << 30), "3Gi");
        assert_eq!(f("memory", 1000), "1000");
        assert_eq!(f("memory", (5 << 20) + 1), "5242881 (~5.0Mi)");
        assert_eq!(f("cpu", 2791728742), "2791728742");
        assert_eq!(f("ephemeral-storage", 100_000_000_000), "100G");
        assert_eq!(format_milli_readable("memory", i64::MAX), "over 8Pi");
        // A 300G root volume less Karpenter's overhead (session 32, CMS-Enterprise/eks-core).
        assert_eq!(
            f("ephemeral-storage", 262_623_299 * 1024),
            "262623299Ki (~250.5Gi)"
        );
        assert_eq!(f("ephemeral-storage", 1024), "1Ki");
    }

    #[test]
    fn parses_every_suffix_exactly() {
        let cases: &[(&str, i64)] = &[
            ("0", 0),
            ("1", 1000),
            ("100m", 100),
            ("1.5", 1500),
            ("0.1", 100),
            (".5", 500),
            ("1500m", 1500),
            ("1k", 1_000_000),
            ("1M", 1_000_000_000),
            ("1G", 1_000_000_000_000),
            ("1T", 1_000_000_000_000_000),
            ("2P", 2_000_000_000_000_000_000),
            ("1Ki", 1_024_000),
            ("1Mi", 1_048_576_000),
            ("1Gi", 1_073_741_824_000),
            ("1.5Gi", 1_610_612_736_000),
            ("1Ti", 1_099_511_627_776_000),
            ("1Pi", 1_125_899_906_842_624_000),
            ("1e3", 1_000_000),
            ("1E3", 1_000_000),
            ("1e-3", 1),
            ("12e2", 1_200_000),
            ("1n", 1), // rounds up to one milli-unit
            ("1u", 1),
            ("1000u", 1),
            ("1001u", 2),
            ("-100m", -100),
            ("+2", 2000),
            ("007", 7000),
        ];
        for (text, want) in cases {
            assert_eq!(parse_milli(text), Ok(*want), "{text}");
        }
    }

    #[test]
    fn rejects_malformed_and_huge_values() {
        for bad in [
            "", "abc", "1.2.3", "1Zi", "1 Gi", "Gi", "1e", "1ee3", "--1", "1.5.Gi", ".",
        ] {
            assert!(
                matches!(parse_milli(bad), Err(QuantityError::Syntax(_))),
                "{bad:?}"
            );
        }
        for huge in ["9Ei", "100000000000000000000", "1e40"] {
            assert!(
                matches!(parse_milli(huge), Err(QuantityError::Overflow(_))),
                "{huge:?}"
            );
        }
    }

    // The API server takes up to 2^63−1 units (apimachinery resource.Quantity); what `i64`
    // milli-units cannot hold is "more than anything", not an error.
    #[test]
    fn values_the_api_server_takes_beyond_milli_units_saturate() {
        for big in [
            "10000000Gi",
            "7Ei",
            "9223372036854775807",
            "9223372036854775807000m",
        ] {
            assert_eq!(parse_milli(big), Ok(i64::MAX), "{big}");
        }
        assert_eq!(parse_milli("-10000000Gi"), Ok(i64::MIN));
        assert!(matches!(
            parse_milli("9223372036854775808"),
            Err(QuantityError::Overflow(_))
        ));
        let mut sum = crate::model::resources::Resources::from_pairs(&[("memory", "10000000Gi")]);
        sum.add_assign(&sum.clone());
        assert_eq!(sum.memory, i64::MAX);
        assert_eq!(format_milli("memory", sum.memory), "over 8Pi");
    }

    #[test]
    fn formats_for_humans() {
        assert_eq!(format_milli("cpu", 1500), "1500m");
        assert_eq!(format_milli("cpu", 2000), "2");
        assert_eq!(format_milli("memory", GIB * 16), "16Gi");
        assert_eq!(format_milli("memory", MIB * 893), "893Mi");
        assert_eq!(format_milli("memory", 1000 * 1000), "1000");
    }

    /// aws#2298 / aws#2797: a pod requesting `ephemeral-storage: 100G` was told of
    /// `97656250Ki`; a size written with a decimal suffix reads back in it when that is the
    /// shorter form, and binary sizes keep theirs.
    #[test]
    fn a_decimal_size_reads_back_with_its_decimal_suffix() {
        let bytes = |n: i64| n * 1000;
        assert_eq!(
            format_milli("ephemeral-storage", bytes(100_000_000_000)),
            "100G"
        );
        assert_eq!(format_milli("memory", bytes(2_000_000_000)), "2G");
        assert_eq!(format_milli("memory", bytes(500_000_000)), "500M");
        assert_eq!(format_milli("memory", bytes(3_000_000)), "3M");
        assert_eq!(format_milli("memory", MIB * 1000), "1000Mi");
        assert_eq!(format_milli("memory", GIB * 16), "16Gi");
        assert_eq!(format_milli("memory", bytes(1_000_000_000_000)), "1T");
        assert_eq!(format_milli("memory", bytes(1_500_000)), "1500000");
        assert_eq!(format_milli("cpu", 100_000_000_000_000), "100000000000");
        assert_eq!(format_milli("pods", 58_000), "58");
        assert_eq!(Quantity(1500).value_ceil(), 2);
        assert_eq!(Quantity(-1500).value_ceil(), -1);
    }
}
