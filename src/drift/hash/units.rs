//! The two Go text formats the hashed specs carry: `time.ParseDuration` strings and
//! `resource.Quantity`, whose canonical `String()` is what a `hash:"string"` field hashes.

/// Nanoseconds of a Go duration string (`720h`, `24h0m0s`, `1.5h`, `300ms`), as
/// `time.ParseDuration` reads it (fractions are scaled through a float, as Go does).
pub fn parse_go_duration(text: &str) -> Result<i64, String> {
    let bad = || format!("{text:?} is not a Go duration");
    let (negative, mut rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    if rest == "0" {
        return Ok(0);
    }
    if rest.is_empty() {
        return Err(bad());
    }
    let mut total: i64 = 0;
    while !rest.is_empty() {
        let int_len = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let (int_part, after) = rest.split_at(int_len);
        let (frac_part, after) = match after.strip_prefix('.') {
            Some(a) => {
                let n = a.find(|c: char| !c.is_ascii_digit()).unwrap_or(a.len());
                a.split_at(n)
            }
            None => ("", after),
        };
        if int_part.is_empty() && frac_part.is_empty() {
            return Err(bad());
        }
        let unit_len = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, next) = after.split_at(unit_len);
        let scale: i64 = match unit {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return Err(bad()),
        };
        let whole: i64 = if int_part.is_empty() {
            0
        } else {
            int_part.parse().map_err(|_| bad())?
        };
        let mut value = whole.checked_mul(scale).ok_or_else(bad)?;
        if !frac_part.is_empty() {
            // Go: leadingFraction keeps digits while they fit, then v += f * (unit / scale).
            let digits = &frac_part[..frac_part.len().min(18)];
            let f: f64 = digits.parse::<u64>().map_err(|_| bad())? as f64;
            let div = 10f64.powi(digits.len() as i32);
            value += (f * (scale as f64 / div)) as i64;
        }
        total = total.checked_add(value).ok_or_else(bad)?;
        rest = next;
    }
    Ok(if negative { -total } else { total })
}

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
    fn durations_read_as_go_reads_them() {
        let h = 3_600_000_000_000i64;
        assert_eq!(parse_go_duration("720h"), Ok(720 * h));
        assert_eq!(parse_go_duration("24h0m0s"), Ok(24 * h));
        assert_eq!(parse_go_duration("1h30m"), Ok(h + h / 2));
        assert_eq!(parse_go_duration("1.5h"), Ok(h + h / 2));
        assert_eq!(parse_go_duration("300ms"), Ok(300_000_000));
        assert_eq!(parse_go_duration("0"), Ok(0));
        assert_eq!(parse_go_duration("0s"), Ok(0));
        assert!(parse_go_duration("Never").is_err());
        assert!(parse_go_duration("10").is_err());
    }

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
