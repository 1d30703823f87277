//! Civil dates and RFC 3339 timestamps, in whole seconds since the Unix epoch, UTC: the one
//! conversion between the two every module uses (Kubernetes `creationTimestamp`, EC2
//! `CreationDate`, cron schedules, the catalog's `fetchedAt`). Howard Hinnant's
//! `days_from_civil`/`civil_from_days` (<https://howardhinnant.github.io/date_algorithms.html>).
//!
//! No clock here: callers pass `now` in.

/// UTC calendar fields of an epoch second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Civil {
    /// Year.
    pub year: i64,
    /// 1–12.
    pub month: u32,
    /// 1–31.
    pub day: u32,
    /// 0–23.
    pub hour: u32,
    /// 0–59.
    pub minute: u32,
    /// 0–59.
    pub second: u32,
    /// 0 = Sunday … 6 = Saturday.
    pub weekday: u32,
}

/// The UTC calendar fields of `epoch` (`civil_from_days`).
pub fn civil(epoch: i64) -> Civil {
    let days = epoch.div_euclid(86_400);
    let secs = epoch.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    // 1970-01-01 was a Thursday (4).
    let weekday = (days + 4).rem_euclid(7) as u32;
    Civil {
        year,
        month,
        day,
        hour: (secs / 3600) as u32,
        minute: ((secs % 3600) / 60) as u32,
        second: (secs % 60) as u32,
        weekday,
    }
}

/// Days since the epoch of a proleptic Gregorian date (`days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Seconds since the epoch of an RFC 3339 timestamp (`2024-06-25T10:00:00.000Z`, offsets
/// allowed, fractions dropped); `None` if it is not one.
pub fn parse_rfc3339(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = text.get(r)?;
        if !s.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        s.parse().ok()
    };
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let mut rest = &text[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        rest = &frac[digits..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ if rest.len() == 6
            && rest.is_ascii()
            && matches!(&rest[..1], "+" | "-")
            && &rest[3..4] == ":" =>
        {
            let h: i64 = rest[1..3].parse().ok()?;
            let m: i64 = rest[4..6].parse().ok()?;
            let sign = if rest.starts_with('-') { -1 } else { 1 };
            sign * (h * 3600 + m * 60)
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day);
    Some(days * 86_400 + hour * 3600 + minute * 60 + second - offset)
}

/// `epoch` as RFC 3339 UTC with whole seconds (`2026-12-02T13:50:43Z`), the form Kubernetes
/// writes.
pub fn format_rfc3339(epoch: i64) -> String {
    let c = civil(epoch);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        c.year, c.month, c.day, c.hour, c.minute, c.second
    )
}

/// A duration in nanoseconds as Go's `time.Duration.String` prints it (`1m0s`, `1h30m0s`,
/// `1.5s`, `300ms`, `0s`): what a `metav1.Duration` read from the API becomes when Karpenter
/// writes it out again.
pub fn format_go_duration(nanos: i64) -> String {
    if nanos == 0 {
        return "0s".into();
    }
    let sign = if nanos < 0 { "-" } else { "" };
    let n = nanos.unsigned_abs();
    let fraction = |value: u64, unit: u64| {
        let (whole, rest) = (value / unit, value % unit);
        if rest == 0 {
            whole.to_string()
        } else {
            let digits = format!("{rest:0width$}", width = unit.ilog10() as usize);
            format!("{whole}.{}", digits.trim_end_matches('0'))
        }
    };
    if n < 1_000 {
        return format!("{sign}{n}ns");
    }
    if n < 1_000_000 {
        return format!("{sign}{}µs", fraction(n, 1_000));
    }
    if n < 1_000_000_000 {
        return format!("{sign}{}ms", fraction(n, 1_000_000));
    }
    let (hours, rest) = (n / 3_600_000_000_000, n % 3_600_000_000_000);
    let (minutes, rest) = (rest / 60_000_000_000, rest % 60_000_000_000);
    let seconds = format!("{}s", fraction(rest, 1_000_000_000));
    if hours > 0 {
        format!("{sign}{hours}h{minutes}m{seconds}")
    } else if minutes > 0 {
        format!("{sign}{minutes}m{seconds}")
    } else {
        format!("{sign}{seconds}")
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    /// Go's `time.Duration.String` (`time/time.go`), as `metav1.Duration` marshals.
    #[test]
    fn go_durations_print_as_go_does() {
        for (text, printed) in [
            ("1m", "1m0s"),
            ("90s", "1m30s"),
            ("2h", "2h0m0s"),
            ("1.5s", "1.5s"),
            ("300ms", "300ms"),
            ("0", "0s"),
            ("1h0m1s", "1h0m1s"),
            ("1500us", "1.5ms"),
        ] {
            let nanos = parse_go_duration(text).unwrap();
            assert_eq!(format_go_duration(nanos), printed, "{text}");
        }
    }

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

    /// `(year, month, day, hour, minute, second, weekday)` as a [`Civil`].
    fn fields(y: i64, mo: u32, d: u32, h: u32, mi: u32, s: u32, weekday: u32) -> Civil {
        Civil {
            year: y,
            month: mo,
            day: d,
            hour: h,
            minute: mi,
            second: s,
            weekday,
        }
    }

    #[test]
    fn instants_format_parse_and_split_into_fields() {
        let table = [
            (0, "1970-01-01T00:00:00Z", fields(1970, 1, 1, 0, 0, 0, 4)),
            (
                -1,
                "1969-12-31T23:59:59Z",
                fields(1969, 12, 31, 23, 59, 59, 3),
            ),
            (
                951_782_400,
                "2000-02-29T00:00:00Z",
                fields(2000, 2, 29, 0, 0, 0, 2),
            ),
            (
                1_709_251_199,
                "2024-02-29T23:59:59Z",
                fields(2024, 2, 29, 23, 59, 59, 4),
            ),
            (
                1_709_214_300,
                "2024-02-29T13:45:00Z",
                fields(2024, 2, 29, 13, 45, 0, 4),
            ),
            (
                1_719_309_600,
                "2024-06-25T10:00:00Z",
                fields(2024, 6, 25, 10, 0, 0, 2),
            ),
            (
                4_102_444_800,
                "2100-01-01T00:00:00Z",
                fields(2100, 1, 1, 0, 0, 0, 5),
            ),
        ];
        for (epoch, text, want) in table {
            assert_eq!(format_rfc3339(epoch), text, "{epoch}");
            assert_eq!(parse_rfc3339(text), Some(epoch), "{text}");
            assert_eq!(civil(epoch), want, "{text}");
        }
    }

    #[test]
    fn rfc3339_accepts_fractions_offsets_and_lowercase() {
        let table = [
            ("2024-06-25T10:00:00.000Z", Some(1_719_309_600)),
            ("2024-06-25T10:00:00.123456789Z", Some(1_719_309_600)),
            ("2024-06-25T12:00:00+02:00", Some(1_719_309_600)),
            ("2024-06-25T08:30:00-01:30", Some(1_719_309_600)),
            ("2024-06-25t10:00:00z", Some(1_719_309_600)),
            ("2024-06-25 10:00:00Z", Some(1_719_309_600)),
            ("", None),
            ("2024-06-25", None),
            ("2024-13-01T00:00:00Z", None),
            ("2024-06-32T00:00:00Z", None),
            ("2024-06-25T24:00:00Z", None),
            ("2024-06-25T10:00:00", None),
            ("2024-06-25T10:00:00.Z", None),
            ("2024-06-25T10:00:00+0é:00", None),
            ("2024-06-25T10:00:00+0200", None),
            ("+024-06-25T10:00:00Z", None),
        ];
        for (text, want) in table {
            assert_eq!(parse_rfc3339(text), want, "{text:?}");
        }
    }
}
