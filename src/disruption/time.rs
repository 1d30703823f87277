//! Time without a clock: Go durations (`1h30m`) and the cron schedules Karpenter's budgets
//! accept (`robfig/cron` `ParseStandard`: five fields with month/day names, or
//! `@yearly`/`@annually`/`@monthly`/`@weekly`/`@daily`/`@midnight`/`@hourly`). Calendar fields
//! and RFC 3339 are [`crate::model::time`]'s.
//!
//! Callers pass `now` in: the pure core never reads the system clock.

use std::fmt;
use std::time::Duration;

use crate::model::time::{civil, parse_go_duration};

/// A schedule or duration that cannot be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TimeError {
    /// Bad duration.
    #[error("invalid duration {0:?} (expected a Go duration such as 1h30m, 10m or 90s)")]
    Duration(String),
    /// Bad cron expression.
    #[error("invalid schedule {schedule:?}: {reason}")]
    Schedule {
        /// The schedule as written.
        schedule: String,
        /// What is wrong.
        reason: String,
    },
}

/// Parses a Go duration (`time.ParseDuration`) to whole seconds, rounding fractions down:
/// `1h30m`, `10m`, `90s`, `1.5h`, `500ms` (→ 0), `0`. Negative durations are rejected (budgets
/// and do-not-disrupt only take positive ones).
pub fn parse_duration(text: &str) -> Result<i64, TimeError> {
    let s = text.trim();
    if s.starts_with('-') {
        return Err(TimeError::Duration(text.to_string()));
    }
    parse_go_duration(s)
        .map(|nanos| nanos / 1_000_000_000)
        .map_err(|_| TimeError::Duration(text.to_string()))
}

/// A duration flag (`--timeout`, `--wait-for-lease`): a Go duration (`10m`, `1h30m`,
/// `500ms`, read to the nanosecond as kubectl reads its own duration flags — `500ms` is not
/// rounded down to 0) or a plain number of seconds; never negative.
pub fn parse_duration_flag(text: &str) -> Option<Duration> {
    let s = text.trim();
    if s.starts_with('-') {
        return None;
    }
    crate::model::time::parse_go_duration(s)
        .ok()
        .map(|nanos| Duration::from_nanos(nanos.unsigned_abs()))
        .or_else(|| s.parse::<u64>().ok().map(Duration::from_secs))
}

/// A parsed five-field schedule: one bit per allowed value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    text: String,
    minutes: u64,
    hours: u64,
    days: u64,
    months: u64,
    weekdays: u64,
    /// `*` in day-of-month or day-of-week: then both must match (robfig's `dayMatches`);
    /// otherwise either may.
    day_star: bool,
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];
const WEEKDAYS: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

fn field(
    text: &str,
    min: u32,
    max: u32,
    names: &[&str],
    name_base: u32,
) -> Result<(u64, bool), String> {
    let value = |s: &str| -> Result<u32, String> {
        let lower = s.to_ascii_lowercase();
        if let Some(i) = names.iter().position(|n| *n == lower) {
            return Ok(i as u32 + name_base);
        }
        let n: u32 = s.parse().map_err(|_| format!("{s:?} is not a number"))?;
        if n < min || n > max {
            return Err(format!("{n} is outside {min}-{max}"));
        }
        Ok(n)
    };
    let mut bits = 0u64;
    let mut star = false;
    for part in text.split(',') {
        let (range, step) = match part.split_once('/') {
            Some((r, s)) => {
                let step: u32 = s.parse().map_err(|_| format!("bad step {s:?}"))?;
                if step == 0 {
                    return Err("step 0".into());
                }
                (r, Some(step))
            }
            None => (part, None),
        };
        let (lo, hi) = if range == "*" || range == "?" {
            // robfig drops the star bit only for a step above 1 (`*/1` is still `*`).
            star |= step.is_none_or(|s| s <= 1);
            (min, max)
        } else if let Some((a, b)) = range.split_once('-') {
            (value(a)?, value(b)?)
        } else {
            let v = value(range)?;
            // `5/15` means 5 to the maximum in steps of 15.
            (v, if step.is_some() { max } else { v })
        };
        if lo > hi {
            return Err(format!("range {range:?} is backwards"));
        }
        let step = step.unwrap_or(1);
        let mut v = lo;
        while v <= hi {
            bits |= 1 << v;
            v += step;
        }
    }
    Ok((bits, star))
}

impl Schedule {
    /// Parses a schedule as Karpenter's `cron.ParseStandard` does (UTC).
    pub fn parse(text: &str) -> Result<Schedule, TimeError> {
        let err = |reason: String| TimeError::Schedule {
            schedule: text.to_string(),
            reason,
        };
        let trimmed = text.trim();
        let expanded = match trimmed {
            "@yearly" | "@annually" => "0 0 1 1 *",
            "@monthly" => "0 0 1 * *",
            "@weekly" => "0 0 * * 0",
            "@daily" | "@midnight" => "0 0 * * *",
            "@hourly" => "0 * * * *",
            other if other.starts_with('@') => {
                return Err(err(format!("unknown descriptor {other}")))
            }
            other => other,
        };
        let fields: Vec<&str> = expanded.split_whitespace().collect();
        if fields.len() != 5 {
            return Err(err(format!(
                "expected 5 fields (minute hour day-of-month month day-of-week), got {}",
                fields.len()
            )));
        }
        let (minutes, _) = field(fields[0], 0, 59, &[], 0).map_err(err)?;
        let (hours, _) = field(fields[1], 0, 23, &[], 0).map_err(err)?;
        let (days, dom_star) = field(fields[2], 1, 31, &[], 0).map_err(err)?;
        let (months, _) = field(fields[3], 1, 12, &MONTHS, 1).map_err(err)?;
        // robfig's day-of-week is 0-6: a `7` (Sunday in Vixie cron) is a parse error, so
        // Karpenter's budget fails closed (`nodepool.go` `IsActive`).
        let (weekdays, dow_star) = field(fields[4], 0, 6, &WEEKDAYS, 0).map_err(err)?;
        Ok(Schedule {
            text: trimmed.to_string(),
            minutes,
            hours,
            days,
            months,
            weekdays,
            day_star: dom_star || dow_star,
        })
    }

    /// Whether the minute containing `epoch` is a hit.
    pub fn matches(&self, epoch: i64) -> bool {
        let c = civil(epoch);
        let bit = |set: u64, v: u32| set & (1 << v) != 0;
        bit(self.minutes, c.minute)
            && bit(self.hours, c.hour)
            && bit(self.months, c.month)
            && self.day_matches(c.day, c.weekday)
    }

    /// Whether a window of `duration` seconds opened by the schedule covers `now`: Karpenter's
    /// `next(now − duration) ≤ now` (docs/karpenter.md §5.2), where `next(t)` is the first hit
    /// strictly after `t`. So a `0 9 * * *` schedule with `1h` is active on [09:00, 10:00).
    /// robfig's `Next` gives up after the fifth year and returns Go's zero time, which is never
    /// after now: a schedule that never comes round (`* * 31 2 *`, the CronJob idiom for "never")
    /// is always active (core v1.14.1 `pkg/apis/v1/nodepool.go` `IsActive`).
    pub fn active(&self, now: i64, duration: i64) -> bool {
        let start = now.saturating_sub(duration.max(0));
        self.next_after(start).is_none_or(|hit| hit <= now)
    }

    /// Whether the schedule fires at all within robfig's five-year horizon from `now`: one
    /// that does not (`* * 31 2 *`) makes its budget always active ([`Schedule::active`]).
    pub fn comes_round(&self, now: i64) -> bool {
        self.next_after(now).is_some()
    }

    /// robfig/cron v3 `SpecSchedule.Next` in UTC: the first hit (a whole minute) strictly after
    /// `t`, or `None` (Go's zero time) when none comes by the end of the year five years after
    /// `t + 1s`'s (`yearLimit`).
    fn next_after(&self, t: i64) -> Option<i64> {
        const MINUTES_PER_DAY: i64 = 24 * 60;
        let year_limit = civil(t.saturating_add(1)).year + 5;
        let first = t.div_euclid(60) + 1;
        let mut day = first.div_euclid(MINUTES_PER_DAY);
        let mut from = first.rem_euclid(MINUTES_PER_DAY);
        let bit = |set: u64, v: i64| set & (1 << v) != 0;
        loop {
            let c = civil(day * 86_400);
            if c.year > year_limit {
                return None;
            }
            if bit(self.months, i64::from(c.month)) && self.day_matches(c.day, c.weekday) {
                let hit = (from..MINUTES_PER_DAY)
                    .find(|m| bit(self.hours, m / 60) && bit(self.minutes, m % 60));
                if let Some(m) = hit {
                    return Some((day * MINUTES_PER_DAY + m) * 60);
                }
            }
            day += 1;
            from = 0;
        }
    }

    /// robfig's `dayMatches`: with a star in either day field both must match, else either.
    fn day_matches(&self, day: u32, weekday: u32) -> bool {
        let dom = self.days & (1 << day) != 0;
        let dow = self.weekdays & (1 << weekday) != 0;
        if self.day_star {
            dom && dow
        } else {
            dom || dow
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::time::parse_rfc3339;

    fn at(text: &str) -> i64 {
        parse_rfc3339(text).unwrap()
    }

    #[test]
    fn go_durations() {
        assert_eq!(parse_duration("1h30m"), Ok(5400));
        assert_eq!(parse_duration("10m"), Ok(600));
        assert_eq!(parse_duration("90s"), Ok(90));
        assert_eq!(parse_duration("1.5h"), Ok(5400));
        assert_eq!(parse_duration("500ms"), Ok(0));
        assert_eq!(parse_duration("0"), Ok(0));
        assert_eq!(parse_duration("2h0m0s"), Ok(7200));
        for bad in ["", "h", "1x", "-1h", "1", "1h-", "."] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn duration_flags_take_go_durations_or_seconds() {
        let table = [
            ("30s", Some(30)),
            ("1h30m", Some(5400)),
            ("90", Some(90)),
            (" 90 ", Some(90)),
            ("0", Some(0)),
            ("0s", Some(0)),
            ("-5", None),
            ("-1m", None),
            ("", None),
            ("ten", None),
        ];
        for (text, want) in table {
            assert_eq!(
                parse_duration_flag(text),
                want.map(Duration::from_secs),
                "{text:?}"
            );
        }
        // Sub-second flags are kept, not rounded down to 0 (`--timeout 500ms` is no "none";
        // noticed by s30-linekcfg beside `--request-timeout`).
        assert_eq!(
            parse_duration_flag("500ms"),
            Some(Duration::from_millis(500))
        );
        assert_eq!(
            parse_duration_flag("1.5s"),
            Some(Duration::from_millis(1500))
        );
    }

    #[test]
    fn schedules_parse_names_ranges_steps_and_macros() {
        let s = Schedule::parse("0 9 * * mon-fri").unwrap();
        assert!(s.matches(at("2024-06-24T09:00:00Z")), "Monday");
        assert!(!s.matches(at("2024-06-23T09:00:00Z")), "Sunday");
        assert!(!s.matches(at("2024-06-24T09:01:00Z")));
        let s = Schedule::parse("*/15 * * jan,JUL *").unwrap();
        assert!(s.matches(at("2024-07-01T10:45:00Z")));
        assert!(!s.matches(at("2024-06-01T10:45:00Z")));
        assert!(!s.matches(at("2024-07-01T10:46:00Z")));
        assert!(Schedule::parse("@daily")
            .unwrap()
            .matches(at("2024-01-05T00:00:00Z")));
        assert!(Schedule::parse("@hourly")
            .unwrap()
            .matches(at("2024-01-05T07:00:00Z")));
        assert!(Schedule::parse("@weekly")
            .unwrap()
            .matches(at("2024-06-23T00:00:00Z")));
        assert!(Schedule::parse("0 0 * * 0")
            .unwrap()
            .matches(at("2024-06-23T00:00:00Z")));
        // Day-of-month and day-of-week both restricted: either matches.
        let s = Schedule::parse("0 0 1 * mon").unwrap();
        assert!(
            s.matches(at("2024-06-01T00:00:00Z")),
            "the 1st (a Saturday)"
        );
        assert!(s.matches(at("2024-06-03T00:00:00Z")), "a Monday");
        assert!(!s.matches(at("2024-06-04T00:00:00Z")));
        for bad in [
            "",
            "* * * *",
            "60 * * * *",
            "* * * * funday",
            "@often",
            "5-1 * * * *",
            "*/0 * * * *",
        ] {
            assert!(Schedule::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_window_is_open_from_the_hit_for_the_duration() {
        let s = Schedule::parse("0 9 * * *").unwrap();
        let hour = 3600;
        assert!(s.active(at("2024-06-24T09:00:00Z"), hour));
        assert!(s.active(at("2024-06-24T09:59:59Z"), hour));
        assert!(!s.active(at("2024-06-24T10:00:00Z"), hour));
        assert!(!s.active(at("2024-06-24T08:59:59Z"), hour));
        assert!(s.active(at("2024-06-25T08:00:00Z"), 24 * hour));
    }

    /// robfig/cron v3 `spec.go` `Next`: no hit by the end of the fifth year after `t` returns the
    /// zero time, which `IsActive` (core v1.14.1 `pkg/apis/v1/nodepool.go`) reads as active. Dates
    /// that do not exist never come round (Feb 30/31, Apr/Jun/Sep/Nov 31); Feb 29 does, and so
    /// does a 31st restricted by a weekday (either day field may match when neither is a star).
    #[test]
    fn a_schedule_that_never_comes_round_is_active_as_go_zero_time() {
        let hour = 3600;
        for never in [
            "* * 31 2 *",
            "0 0 30 2 *",
            "0 0 31 4,6,9,11 *",
            "0 0 31 feb */1",
        ] {
            let s = Schedule::parse(never).unwrap();
            assert!(s.active(at("2024-06-24T12:00:00Z"), hour), "{never}");
            assert_eq!(s.next_after(at("2024-06-24T12:00:00Z")), None, "{never}");
        }
        let leap = Schedule::parse("0 0 29 2 *").unwrap();
        assert!(!leap.active(at("2025-03-01T12:00:00Z"), hour));
        assert_eq!(
            leap.next_after(at("2025-03-01T12:00:00Z")),
            Some(at("2028-02-29T00:00:00Z"))
        );
        // From 2097 the next 29 February is in 2104, past robfig's five-year limit.
        assert_eq!(leap.next_after(at("2097-01-01T00:00:00Z")), None);
        assert!(leap.active(at("2097-01-01T00:00:00Z"), hour));
        let either = Schedule::parse("0 0 31 2 mon").unwrap();
        assert!(!either.active(at("2024-06-24T12:00:00Z"), hour));
        assert!(
            either.active(at("2024-02-05T00:30:00Z"), hour),
            "a Monday in February"
        );
    }

    /// `core: pkg/apis/v1/nodepool_budgets_test.go` Context "IsActive": "should always consider a
    /// schedule and time in UTC", "should return that a schedule is inactive" (@yearly, 1h),
    /// "should return that a schedule is active when the duration is longer than the
    /// recurrence", "should return that a schedule is inactive when the schedule hit is after
    /// the duration", "should return an error indicating why the cron fails to parse".
    #[test]
    fn nodepool_budgets_is_active_table() {
        let (minute, hour) = (60, 3600);
        // 2000-05-31T00:00+01:00 is 23:00 UTC the day before: 23 h after the @daily hit.
        let s = Schedule::parse("@daily").unwrap();
        assert!(!s.active(at("2000-05-30T23:00:00Z"), 30 * minute));
        let yearly = Schedule::parse("@yearly").unwrap();
        assert!(!yearly.active(at("2024-06-24T12:00:00Z"), hour));
        assert!(yearly.active(at("2024-01-01T00:30:00Z"), hour));
        assert!(s.active(at("2024-01-07T00:00:00Z"), 48 * hour));
        let sunday = Schedule::parse("30 6 * * SUN").unwrap();
        assert!(!sunday.active(at("2024-01-07T00:00:00Z"), 6 * hour));
        assert!(Schedule::parse("0 0 * * tue-mon").is_err());
    }

    /// Karpenter parses budget schedules with `robfig/cron/v3` v3.0.1 `ParseStandard`
    /// (core v1.14.1 `pkg/apis/v1/nodepool.go` `IsActive`), whose day-of-week bounds are 0-6
    /// (`spec.go` `dow`) and whose `getRange` keeps the star bit for a step of 1 and ORs it over
    /// a list. Scenario (session 26 sweep): a weekend window written `0 0 * * 6,7`, as Vixie
    /// cron and ASG recurrences allow — the CRD pattern admits it, robfig refuses it ("end of
    /// range (7) above maximum (6)"), and the budget fails closed.
    #[test]
    fn day_of_week_is_zero_to_six_and_a_step_of_one_stays_a_star() {
        for bad in ["0 0 * * 6,7", "0 0 * * 7", "0 22 * * 1-7", "0 0 * * */7,7"] {
            let e = Schedule::parse(bad).unwrap_err();
            assert!(e.to_string().contains("7 is outside 0-6"), "{bad}: {e}");
        }
        assert!(Schedule::parse("0 0 * * 0-6").is_ok());
        // `*/1` in day-of-month is still `*`: both day fields must match (Mondays only).
        let s = Schedule::parse("0 9 */1 * mon").unwrap();
        assert!(s.matches(at("2024-06-24T09:00:00Z")), "a Monday");
        assert!(!s.matches(at("2024-06-25T09:00:00Z")), "a Tuesday");
        // A step above 1 drops the star: either day field may match.
        let s = Schedule::parse("0 9 */2 * mon").unwrap();
        assert!(s.matches(at("2024-06-25T09:00:00Z")), "the 25th, a Tuesday");
        // A star anywhere in the list keeps it.
        let s = Schedule::parse("0 9 */2,* * mon").unwrap();
        assert!(!s.matches(at("2024-06-25T09:00:00Z")));
    }
}
