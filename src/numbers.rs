//! Numbers and times as people read them, in every text and page hatshop makes: counts
//! with thousands separated, latencies with the decimals their size needs, shares,
//! lengths of time and of memory.

/// 1234567 → "1,234,567".
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A count and its noun, the noun plural but for one: "1 repeat", "12,000 calls",
/// "2 batches".
pub fn counted(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    match (n, noun.ends_with("ch") || noun.ends_with('s')) {
        (1, _) => format!("1 {noun}"),
        (_, true) => format!("{} {noun}es", thousands(n)),
        _ => format!("{} {noun}s", thousands(n)),
    }
}

/// Microseconds with as many decimals as are meaningful at that size, and thousands
/// separated as counts are (`12,345`).
pub fn format_us(us: f64) -> String {
    // No number stands for "none": an infinite or undefined latency prints as a dash.
    if !us.is_finite() {
        "-".into()
    } else if us < 10.0 {
        format!("{us:.2}")
    } else if us < 1_000.0 {
        format!("{us:.1}")
    } else {
        thousands(us.round() as u64)
    }
}

/// A time in µs with its unit: `850.0 µs`, `7.20 ms`, `1.25 s`.
pub fn time_text(us: f64) -> String {
    if us < 1_000.0 {
        format!("{us:.1} µs")
    } else if us < 1_000_000.0 {
        format!("{:.2} ms", us / 1e3)
    } else {
        format!("{:.2} s", us / 1e6)
    }
}

/// A run's length as a person reads it: `44 ms` under a second, else `4.04 s`.
pub fn elapsed_text(secs: f64) -> String {
    if secs < 0.01 {
        format!("{:.1} ms", secs * 1e3)
    } else if secs < 1.0 {
        format!("{:.0} ms", secs * 1e3)
    } else {
        format!("{secs:.2} s")
    }
}

/// A share as a percentage with the digits a small share needs (`0.25 %`, `12.5 %`).
pub fn percent(share: f64) -> String {
    let p = share * 100.0;
    if p != 0.0 && p < 1.0 {
        format!("{p:.2} %")
    } else {
        format!("{p:.1} %")
    }
}

/// An amount of memory: "12 MB", "768 MiB", "1.25 GiB", "24 GiB".
pub fn bytes_text(bytes: u64) -> String {
    let gib = bytes as f64 / (1u64 << 30) as f64;
    if gib >= 10.0 {
        format!("{gib:.0} GiB")
    } else if gib >= 1.0 {
        let two = format!("{gib:.2}");
        format!("{} GiB", two.trim_end_matches('0').trim_end_matches('.'))
    } else if bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{:.0} MB", bytes as f64 / 1e6)
    }
}

/// A test's p-value as a sentence gives it: `p < 0.0001`, four places under 0.05
/// (what a finding rests on), two above.
pub fn p_value_text(p: f64) -> String {
    match p {
        p if p < 0.0001 => "p < 0.0001".into(),
        p if p < 0.05 => format!("p = {p:.4}"),
        p => format!("p = {p:.2}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_said_with_their_plural() {
        assert_eq!(counted(1u64, "batch"), "1 batch");
        assert_eq!(counted(0u64, "batch"), "0 batches");
        assert_eq!(counted(12_000u64, "repeat"), "12,000 repeats");
    }

    #[test]
    fn thousands_groups_digits() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn microseconds_keep_meaningful_decimals() {
        assert_eq!(format_us(1.23456), "1.23");
        assert_eq!(format_us(123.456), "123.5");
        assert_eq!(format_us(12_345.6), "12,346");
        assert_eq!(format_us(f64::INFINITY), "-");
    }

    #[test]
    fn times_carry_the_unit_their_size_needs() {
        assert_eq!(time_text(850.0), "850.0 µs");
        assert_eq!(time_text(7_200.0), "7.20 ms");
        assert_eq!(time_text(1_250_000.0), "1.25 s");
    }

    #[test]
    fn a_short_run_reads_in_milliseconds() {
        assert_eq!(elapsed_text(0.0044), "4.4 ms");
        assert_eq!(elapsed_text(0.044), "44 ms");
        assert_eq!(elapsed_text(4.044), "4.04 s");
    }

    #[test]
    fn a_small_share_keeps_two_decimals() {
        assert_eq!(percent(0.0025), "0.25 %");
        assert_eq!(percent(0.125), "12.5 %");
        assert_eq!(percent(0.0), "0.0 %");
    }

    #[test]
    fn memory_reads_in_the_unit_its_size_needs() {
        assert_eq!(bytes_text(12_000_000), "12 MB");
        assert_eq!(bytes_text(768 << 20), "768 MiB");
        assert_eq!(bytes_text(5 << 28), "1.25 GiB");
        assert_eq!(bytes_text(24 << 30), "24 GiB");
    }
}
