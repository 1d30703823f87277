//! The two Go text formats the hashed specs carry: `time.ParseDuration` strings (read by
//! [`crate::model::time::parse_go_duration`]) and `resource.Quantity`, whose canonical
//! `String()` is what a `hash:"string"` field hashes.

/// `resource.Quantity.String()` of a quantity as written (`20Gi`, `100G`, `1024Mi`, `80`):
/// the canonical form Kubernetes prints. Integer amounts only; anything else (fractions,
/// exponents) is refused rather than guessed.
pub fn canonical_quantity(text: &str) -> Result<String, String> {
    let bad = || format!("quantity {text:?} is not an integer amount this tool can canonicalise");
    let digits_end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, suffix) = text.split_at(digits_end);
    let n: i128 = digits.parse().map_err(|_| bad())?;
    const BINARY: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
    const DECIMAL: [&str; 7] = ["", "k", "M", "G", "T", "P", "E"];
    if n == 0 {
        return Ok("0".into());
    }
    if let Some(p) = BINARY.iter().skip(1).position(|s| *s == suffix) {
        let value = n * 1024i128.pow(p as u32 + 1);
        if value < 1024 {
            return Ok(decimal_canonical(value, 0));
        }
        // AsCanonicalBase1024Bytes: divide by 1024 while it divides evenly.
        let (mut m, mut e) = (value, 0usize);
        while m % 1024 == 0 && e < 6 {
            m /= 1024;
            e += 1;
        }
        return Ok(format!("{m}{}", BINARY[e]));
    }
    let p = DECIMAL.iter().position(|s| *s == suffix).ok_or_else(bad)?;
    Ok(decimal_canonical(n, 3 * p as u32))
}

/// int64Amount.AsCanonicalBytes: strip factors of ten, then pad back to a multiple of three.
fn decimal_canonical(mut m: i128, mut exponent: u32) -> String {
    while m % 10 == 0 {
        m /= 10;
        exponent += 1;
    }
    while !exponent.is_multiple_of(3) {
        m *= 10;
        exponent -= 1;
    }
    const DECIMAL: [&str; 7] = ["", "k", "M", "G", "T", "P", "E"];
    match DECIMAL.get(exponent as usize / 3) {
        Some(s) => format!("{m}{s}"),
        None => format!("{m}e{exponent}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_print_canonically() {
        // apimachinery resource/quantity_test.go TestQuantityString-style cases.
        for (input, want) in [
            ("2G", "2G"),
            ("20Gi", "20Gi"),
            ("1024Mi", "1Gi"),
            ("1536Mi", "1536Mi"),
            ("1000M", "1G"),
            ("1500M", "1500M"),
            ("100", "100"),
            ("1000", "1k"),
            ("512", "512"),
            ("0Gi", "0"),
            ("10Gi", "10Gi"),
        ] {
            assert_eq!(canonical_quantity(input).as_deref(), Ok(want), "{input}");
        }
        assert!(canonical_quantity("1.5Gi").is_err());
        assert!(canonical_quantity("1e3").is_err());
    }
}
