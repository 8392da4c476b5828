//! `--threshold` as written: `[EVENT:][service.|response.]STAT OP VALUE`, e.g.
//! `p99<5ms`, `create_order:p99.9<=20ms`, `service.mean<1ms`, `errors<1%`,
//! `throughput>5000`. Spaces anywhere are ignored; k6's `p(99)` reads as `p99`.

use crate::stats::threshold::{Clock, LatencyStat, Op, Stat, Threshold};
use crate::suggest::did_you_mean;
use crate::workload::EventType;

use super::quantities::{latency, rate, share};

/// The forms, for an error.
const FORMS: &str = "a threshold is [EVENT:]STAT<VALUE, e.g. p99<5ms, create_order:mean<2ms, \
                     service.p99.9<20ms, max<1s, errors<1%, throughput>5000";

/// Reads one `--threshold`.
pub fn threshold(text: &str) -> Result<Threshold, String> {
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let at = compact
        .find(['<', '>'])
        .ok_or_else(|| format!("'{text}' has no < or >: {FORMS}"))?;
    let (left, rest) = compact.split_at(at);
    let (op, value) = match rest.strip_prefix("<=").or_else(|| rest.strip_prefix(">=")) {
        Some(value) if rest.starts_with('<') => (Op::AtMost, value),
        Some(value) => (Op::AtLeast, value),
        None if rest.starts_with('<') => (Op::Below, &rest[1..]),
        None => (Op::Above, &rest[1..]),
    };
    let (scope, stat) = match left.split_once(':') {
        Some((scope, stat)) => (scope_of(scope)?, stat),
        None => ("all".to_string(), left),
    };
    let (clock, stat) = match stat.split_once('.') {
        Some(("service", stat)) => (Some(Clock::Service), stat),
        Some(("response", stat)) => (Some(Clock::Response), stat),
        _ => (None, stat),
    };
    let stat = stat_of(stat, clock)?;
    let bound = match &stat {
        Stat::ErrorShare => share(value)?,
        Stat::Throughput => rate(
            value
                .trim_end_matches("ops/s")
                .trim_end_matches("/s")
                .trim(),
        )?,
        Stat::Latency(..) => latency(value)?.as_secs_f64() * 1e6,
    };
    Ok(Threshold {
        text: compact,
        scope,
        stat,
        op,
        bound,
    })
}

/// An event type's name, or `all`.
fn scope_of(name: &str) -> Result<String, String> {
    let names = EventType::names();
    if name == "all" || names.contains(&name) {
        return Ok(name.to_string());
    }
    Err(format!(
        "no event type is called '{name}'{}: one of all, {}",
        did_you_mean(name, names.iter().copied().chain(["all"])),
        names.join(", ")
    ))
}

/// The statistic's name, with the clock a latency is read on.
fn stat_of(name: &str, clock: Option<Clock>) -> Result<Stat, String> {
    let latency = |stat| Ok(Stat::Latency(clock.unwrap_or(Clock::Response), stat));
    let not_a_latency = |stat: Stat| match clock {
        Some(_) => Err(format!(
            "'{name}' is not a latency: service. and response. name a latency's clock"
        )),
        None => Ok(stat),
    };
    match name {
        "mean" | "avg" => latency(LatencyStat::Mean),
        "stddev" => latency(LatencyStat::Stddev),
        "max" => latency(LatencyStat::Max),
        "errors" => not_a_latency(Stat::ErrorShare),
        "throughput" => not_a_latency(Stat::Throughput),
        _ if name.starts_with('p') => {
            let percent = name[1..].trim_start_matches('(').trim_end_matches(')');
            let (label, p) = crate::stats::parse_percentiles(percent)?
                .pop()
                .ok_or_else(|| FORMS.to_string())?;
            latency(LatencyStat::Percentile(label, p))
        }
        _ => Err(format!(
            "'{name}' is not a statistic{}: mean, stddev, max, p50 … p99.99 (any percentile), errors or throughput",
            did_you_mean(name, ["mean", "stddev", "max", "errors", "throughput"])
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_read_as_k6_writes_them() {
        let t = threshold("p(95) < 200").unwrap();
        assert_eq!(t.scope, "all");
        assert_eq!(
            t.stat,
            Stat::Latency(Clock::Response, LatencyStat::Percentile("p95".into(), 95.0))
        );
        assert_eq!(
            (t.op, t.bound),
            (Op::Below, 200_000.0),
            "a bare number is ms"
        );
        let t = threshold("create_order:service.p99.9<=20ms").unwrap();
        assert_eq!(t.scope, "create_order");
        assert_eq!(
            t.stat,
            Stat::Latency(
                Clock::Service,
                LatencyStat::Percentile("p99.9".into(), 99.9)
            )
        );
        assert_eq!((t.op, t.bound), (Op::AtMost, 20_000.0));
        let t = threshold("errors<1%").unwrap();
        assert_eq!((t.stat, t.bound), (Stat::ErrorShare, 0.01));
        let t = threshold("read:throughput>=5k/s").unwrap();
        assert_eq!(
            (t.stat, t.op, t.bound),
            (Stat::Throughput, Op::AtLeast, 5_000.0)
        );
    }

    #[test]
    fn a_malformed_threshold_says_what_is_wrong() {
        let error = |text| threshold(text).unwrap_err();
        assert!(error("p99 5ms").contains("has no < or >"));
        assert!(error("creat_order:p99<5ms").contains("did you mean 'create_order'"));
        assert!(error("p99<-1ms").contains("negative"));
        assert!(error("p101<5ms").contains("at most 100"));
        assert!(error("service.errors<1%").contains("not a latency"));
        assert!(error("errors<150%").contains("a share"));
        assert!(error("maen<1ms").contains("did you mean 'mean'"));
        assert!(error("throughput>0").contains("above zero"));
    }
}
