//! The one grammar for the times, counts and rates that flags and the settings file
//! take, so every flag reads `10s`, `200k` or `1e6` alike:
//!
//! - a time is a number with a unit (`500ms`, `10s`, `1.5m`, `2h`, `1m30s`), or a bare
//!   number in the flag's documented unit (seconds, or milliseconds for a latency);
//! - a count is a whole number, with `_` or `,` between digits (`1_000`, `1,000`), a
//!   suffix `k` (thousand), `M` (million) or `G` (billion), or in `1e6` notation;
//! - a rate is a count per second that may have decimals (`2.5k`, `0.5`).
//!
//! Errors say what is accepted in words a user reads, never a parser's own; clap puts
//! the flag and the value in front of them.

use std::time::Duration;

/// A time's units, longest first so `ms` is not read as `m` then `s`.
const TIME_UNITS: [(&str, f64); 15] = [
    ("hours", 3600.0),
    ("hour", 3600.0),
    ("mins", 60.0),
    ("min", 60.0),
    ("secs", 1.0),
    ("sec", 1.0),
    ("ms", 1e-3),
    ("us", 1e-6),
    ("µs", 1e-6),
    ("ns", 1e-9),
    ("h", 3600.0),
    ("m", 60.0),
    ("s", 1.0),
    ("d", 86400.0),
    ("w", 7.0 * 86400.0),
];

const TIME_FORMS: &str = "a time is a number with a unit: 500ms, 10s, 1.5m, 2h, 1m30s";

/// A count's suffixes; `m` is minutes in a time, so a million is `M` alone.
const COUNT_SUFFIXES: [(char, f64); 5] =
    [('k', 1e3), ('K', 1e3), ('M', 1e6), ('G', 1e9), ('B', 1e9)];

const COUNT_FORMS: &str = "a count is a whole number: 20000, 20_000, 20,000, 20k, 1M, 1e6";

/// Seconds, from a time or a bare number of seconds (`--duration 10` or `10s`).
pub fn seconds(text: &str) -> Result<f64, String> {
    time(text, 1.0).map_err(|e| format!("{e} (a bare number is seconds)"))
}

/// Seconds of a span that cannot be empty (`--duration`, `--interval`, a timeout).
pub fn above_zero_seconds(text: &str) -> Result<f64, String> {
    match seconds(text)? {
        0.0 => Err("it must be above zero".into()),
        secs => Ok(secs),
    }
}

/// A latency bound above zero, from a time or a bare number of milliseconds
/// (`--p99-under 5`).
pub fn latency(text: &str) -> Result<Duration, String> {
    let secs = time(text, 1e-3).map_err(|e| format!("{e} (a bare number is milliseconds)"))?;
    if secs == 0.0 {
        return Err("it must be above zero".into());
    }
    Duration::try_from_secs_f64(secs).map_err(|_| format!("'{text}' is too long"))
}

/// A time from a bare number of seconds or a time, as a `Duration` (`--ramp 60`).
pub fn duration(text: &str) -> Result<Duration, String> {
    let secs = seconds(text)?;
    Duration::try_from_secs_f64(secs).map_err(|_| format!("'{text}' is too long"))
}

/// A time in seconds, `bare` the seconds of a number given without a unit.
fn time(text: &str, bare: f64) -> Result<f64, String> {
    let text = text.trim();
    let bad = || TIME_FORMS.to_string();
    if text.is_empty() {
        return Err(bad());
    }
    if text.starts_with('-') {
        return Err("a time cannot be negative".into());
    }
    if let Some(number) = plain_number(text) {
        return non_negative(number * bare).ok_or_else(bad);
    }
    let mut rest = text;
    let mut total = 0.0;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(bad)?;
        if digits == 0 {
            return Err(bad());
        }
        let number: f64 = rest[..digits].parse().map_err(|_| bad())?;
        let after = rest[digits..].trim_start();
        let (unit, scale) = TIME_UNITS
            .iter()
            .find(|(unit, _)| after.starts_with(unit))
            .ok_or_else(bad)?;
        total += number * scale;
        rest = after[unit.len()..].trim_start();
    }
    non_negative(total).ok_or_else(bad)
}

/// A whole count (`--events 200k`).
pub fn count<T: TryFrom<u64>>(text: &str) -> Result<T, String> {
    let value = scaled(text).ok_or_else(|| COUNT_FORMS.to_string())?;
    if value.fract() != 0.0 {
        return Err(format!("{COUNT_FORMS} ('{}' is not whole)", text.trim()));
    }
    if value > u64::MAX as f64 {
        return Err(format!("'{}' is too large", text.trim()));
    }
    T::try_from(value as u64).map_err(|_| format!("'{}' is too large", text.trim()))
}

/// A whole count of at least one (`-c 4`, `--repeat 3`): zero of them runs nothing.
pub fn positive_count<T: TryFrom<u64>>(text: &str) -> Result<T, String> {
    match count::<u64>(text)? {
        0 => Err("it must be at least 1".into()),
        n => T::try_from(n).map_err(|_| format!("'{}' is too large", text.trim())),
    }
}

/// A rate, operations per second above zero (`--rate 5k`, `0.5`).
pub fn rate(text: &str) -> Result<f64, String> {
    match scaled(text) {
        Some(value) if value > 0.0 => Ok(value),
        Some(_) => Err("a rate is above zero".into()),
        None => Err("a rate is operations per second: 5000, 5k, 2.5k, 0.5".into()),
    }
}

/// A share from 0 to 1 (`0.2`) or a percentage (`20%`): `--conflicts`, `--trace-sample`.
pub fn share(text: &str) -> Result<f64, String> {
    let text = text.trim();
    let value = match text.strip_suffix('%') {
        Some(percent) => plain_number(percent.trim()).map(|p| p / 100.0),
        None => plain_number(text),
    };
    match value {
        Some(value) if (0.0..=1.0).contains(&value) => Ok(value),
        _ => Err("a share is from 0 to 1 (0.2) or a percentage (20%)".into()),
    }
}

/// A non-negative number with separators, a count suffix or an exponent.
fn scaled(text: &str) -> Option<f64> {
    let text = text.trim();
    let (number, scale) = match text.char_indices().last() {
        Some((at, last)) => match COUNT_SUFFIXES.iter().find(|(s, _)| *s == last) {
            Some((_, scale)) => (&text[..at], *scale),
            None => (text, 1.0),
        },
        None => return None,
    };
    non_negative(plain_number(&without_separators(number)?)? * scale)
}

/// The digits without `_` and `,` between them (`1,000,000`), or `None` where a
/// separator stands anywhere else (`1,,0`, `,5`): a list given by mistake. A `,`
/// separates thousands only (`1,00` may be a decimal comma: refused, not 100).
fn without_separators(text: &str) -> Option<String> {
    let whole = text.split(['.', 'e', 'E']).next().unwrap_or_default();
    let mut groups = whole.split(',');
    let first = groups.next().unwrap_or_default().replace('_', "");
    if whole.contains(',') && (first.len() > 3 || groups.any(|group| group.len() != 3)) {
        return None;
    }
    separators_between_digits(text)
}

fn separators_between_digits(text: &str) -> Option<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut kept = String::with_capacity(text.len());
    for (i, &c) in chars.iter().enumerate() {
        if c == '_' || c == ',' {
            let between = i > 0
                && chars[i - 1].is_ascii_digit()
                && chars.get(i + 1).is_some_and(char::is_ascii_digit);
            if !between {
                return None;
            }
        } else {
            kept.push(c);
        }
    }
    Some(kept)
}

/// A decimal number (`10`, `1.5`, `1e6`), never `inf`, `nan` or a sign.
fn plain_number(text: &str) -> Option<f64> {
    let plain = text
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '-' | '+'))
        && text.starts_with(|c: char| c.is_ascii_digit() || c == '.');
    plain.then(|| text.parse::<f64>().ok()).flatten()
}

fn non_negative(value: f64) -> Option<f64> {
    (value.is_finite() && value >= 0.0).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_take_units_or_a_bare_number_in_the_flags_unit() {
        assert_eq!(seconds("10").unwrap(), 10.0);
        assert_eq!(seconds("10s").unwrap(), 10.0);
        assert_eq!(seconds("1.5").unwrap(), 1.5);
        assert_eq!(seconds("500ms").unwrap(), 0.5);
        assert_eq!(seconds("1m").unwrap(), 60.0);
        assert_eq!(seconds("1.5m").unwrap(), 90.0);
        assert_eq!(seconds("2h").unwrap(), 7200.0);
        assert_eq!(seconds("1m30s").unwrap(), 90.0);
        assert_eq!(seconds("1m 30s").unwrap(), 90.0);
        assert_eq!(seconds("10 min").unwrap(), 600.0);
        assert!((seconds("250us").unwrap() - 250e-6).abs() < 1e-12);
        assert_eq!(latency("5").unwrap(), Duration::from_millis(5));
        assert_eq!(latency("5ms").unwrap(), Duration::from_millis(5));
        assert_eq!(latency("1s").unwrap(), Duration::from_secs(1));
        assert_eq!(duration("60").unwrap(), Duration::from_secs(60));
        for bad in ["", "s", "ten", "10x", "inf", "nan", "1e400", "10s5", "1..2"] {
            let e = seconds(bad).unwrap_err();
            assert!(e.contains("500ms, 10s"), "{bad}: {e}");
        }
        for negative in ["-1", "-1s", "-0.5ms"] {
            let e = seconds(negative).unwrap_err();
            assert!(e.contains("a time cannot be negative"), "{negative}: {e}");
        }
        assert_eq!(
            above_zero_seconds("0").unwrap_err(),
            "it must be above zero"
        );
        assert_eq!(latency("0ms").unwrap_err(), "it must be above zero");
    }

    #[test]
    fn counts_take_separators_suffixes_and_exponents() {
        assert_eq!(count::<u64>("20000").unwrap(), 20000);
        assert_eq!(count::<u64>("20_000").unwrap(), 20000);
        assert_eq!(count::<u64>("1,000,000").unwrap(), 1_000_000);
        assert_eq!(count::<u64>("20,000k").unwrap(), 20_000_000);
        assert_eq!(count::<u64>("20k").unwrap(), 20000);
        assert_eq!(count::<u64>("1.5k").unwrap(), 1500);
        assert_eq!(count::<u64>("1M").unwrap(), 1_000_000);
        assert_eq!(count::<u64>("2G").unwrap(), 2_000_000_000);
        assert_eq!(count::<u64>("1e6").unwrap(), 1_000_000);
        assert_eq!(count::<u64>("0").unwrap(), 0);
        assert_eq!(count::<u32>("4").unwrap(), 4);
        assert!(count::<u32>("5G").unwrap_err().contains("too large"));
        assert!(count::<u64>("1.5").unwrap_err().contains("not whole"));
        for bad in [
            "", "k", "1m", "-1", "1,,000", ",5", "1,", "abc", "1e6e", "inf", "1,00", "1000,000",
            "1,0000", "1,5k",
        ] {
            let e = count::<u64>(bad).unwrap_err();
            assert!(e.contains("20k, 1M"), "{bad}: {e}");
        }
        assert!(
            positive_count::<usize>("0")
                .unwrap_err()
                .contains("at least 1")
        );
        assert_eq!(positive_count::<usize>("16").unwrap(), 16);
    }

    #[test]
    fn shares_are_fractions_or_percentages() {
        assert_eq!(share("0.2").unwrap(), 0.2);
        assert_eq!(share("20%").unwrap(), 0.2);
        assert_eq!(share("1").unwrap(), 1.0);
        assert_eq!(share("0").unwrap(), 0.0);
        for bad in ["1.5", "150%", "-0.1", "half", ""] {
            assert!(share(bad).unwrap_err().contains("20%"), "{bad}");
        }
    }

    #[test]
    fn rates_are_above_zero_and_may_have_decimals() {
        assert_eq!(rate("5000").unwrap(), 5000.0);
        assert_eq!(rate("2.5k").unwrap(), 2500.0);
        assert_eq!(rate("0.5").unwrap(), 0.5);
        assert!(rate("0").unwrap_err().contains("above zero"));
        assert!(rate("fast").unwrap_err().contains("5k"));
        assert!(rate("-5").is_err());
    }
}
