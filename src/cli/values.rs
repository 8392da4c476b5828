//! The values flags take that clap does not read itself: `KEY=VALUE`, a warm-up as a
//! count or a time, a rate or a ramp, a cluster's URL per size.

use super::quantities;

/// `key=value`, a store setting (`--set`).
pub(super) fn parse_key_value(text: &str) -> Result<(String, String), String> {
    let (key, value) = text
        .split_once('=')
        .ok_or_else(|| format!("expected KEY=VALUE, got '{text}'"))?;
    let key = key.trim();
    if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!(
            "'{key}' is not a setting name (letters, digits, _)"
        ));
    }
    if value.contains(['\n', '\r']) || value.trim().is_empty() {
        return Err(format!("{key}: the value must be one non-empty line"));
    }
    Ok((key.to_string(), value.trim().to_string()))
}

/// `--percentiles 50,99,99.9`: the table's columns, in rising order, each once.
#[derive(Debug, Clone, PartialEq)]
pub struct PercentileList(pub Vec<(String, f64)>);

impl std::str::FromStr for PercentileList {
    type Err = String;

    fn from_str(text: &str) -> Result<PercentileList, String> {
        crate::stats::parse_percentiles(text).map(PercentileList)
    }
}

/// `--warmup`: a count of events, how long to warm up, or until latency settles.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WarmupArg {
    /// This many events (`--warmup 20000`).
    Events(u64),
    /// Events until this long after the warm-up began (`--warmup 10s`).
    Time(std::time::Duration),
    /// Events until the warm-up's mean latency stops falling, within a limit
    /// (`--warmup settled`).
    Settled,
}

impl std::str::FromStr for WarmupArg {
    type Err = String;

    fn from_str(text: &str) -> Result<WarmupArg, String> {
        parse_warmup(text)
    }
}

/// A count (`20000`, `20k`) is events; a number with a time's unit (`10s`, `1m`) is a
/// time, so a bare number is never read as seconds here; `settled` waits for latency.
pub(super) fn parse_warmup(text: &str) -> Result<WarmupArg, String> {
    if text == "settled" {
        return Ok(WarmupArg::Settled);
    }
    if let Ok(events) = quantities::count::<u64>(text) {
        return Ok(WarmupArg::Events(events));
    }
    match quantities::duration(text) {
        Ok(time) if !time.is_zero() => Ok(WarmupArg::Time(time)),
        _ => {
            Err("a warm-up is a count of events (20000, 20k), a time (10s, 1m) or `settled`".into())
        }
    }
}

/// `--rate`: one rate, or FROM..TO for a ramp.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateArg {
    pub from: f64,
    pub to: f64,
}

impl RateArg {
    /// One rate from start to end (`--rate 2000`).
    pub fn fixed(ops_s: f64) -> RateArg {
        RateArg {
            from: ops_s,
            to: ops_s,
        }
    }

    /// Whether the rate climbs during the run (`--rate 1000..8000`).
    pub fn is_ramp(self) -> bool {
        self.from != self.to
    }
}

/// `5000`, `5k`, or `FROM..TO` for a ramp, in operations per second.
pub(super) fn parse_rate(text: &str) -> Result<RateArg, String> {
    let number = |part: &str| {
        quantities::rate(part).map_err(|e| format!("{e}; a ramp is FROM..TO, e.g. 1k..20k"))
    };
    match text.split_once("..") {
        Some((from, to)) => Ok(RateArg {
            from: number(from)?,
            to: number(to)?,
        }),
        None => number(text).map(RateArg::fixed),
    }
}

/// `--stages`: each stage's length and the rate it reaches, as written.
#[derive(Debug, Clone, PartialEq)]
pub struct StagesArg(pub Vec<(std::time::Duration, f64)>);

/// `30s:1000,1m:5k,30s:0`, k6's stages: TIME:RATE, comma-separated.
pub(super) fn parse_stages(text: &str) -> Result<StagesArg, String> {
    let forms = "stages are TIME:RATE, comma-separated, e.g. 30s:1000,1m:5k,30s:0";
    text.split(',')
        .map(|stage| {
            let (length, rate) = stage
                .split_once(':')
                .ok_or_else(|| format!("'{}' is not TIME:RATE; {forms}", stage.trim()))?;
            let length = quantities::duration(length).map_err(|e| format!("{e}; {forms}"))?;
            let rate = match rate.trim() {
                "0" => 0.0,
                rate => quantities::rate(rate).map_err(|e| format!("{e}; {forms}"))?,
            };
            Ok((length, rate))
        })
        .collect::<Result<_, String>>()
        .map(StagesArg)
}

/// `cassandra:3=URL` as `--server-url` takes it.
pub(super) fn parse_server_url(text: &str) -> Result<(String, usize, String), String> {
    let bad = || {
        format!(
            "'{}' is not SERVER:NODES=URL (e.g. cassandra:3=cassandra://10.0.0.1,10.0.0.2,10.0.0.3/hatshop)",
            crate::secrets::redact(text)
        )
    };
    let (place, url) = text.split_once('=').ok_or_else(bad)?;
    let (server, nodes) = place.split_once(':').ok_or_else(bad)?;
    let nodes: usize = nodes.parse().map_err(|_| bad())?;
    if nodes == 0 || !url.contains("://") {
        return Err(bad());
    }
    Ok((server.to_string(), nodes, url.to_string()))
}
