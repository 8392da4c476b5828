//! The values flags take that clap does not read itself: `KEY=VALUE`, durations, a
//! warm-up as a count or a time, a rate or a ramp, a cluster's URL per size.

/// `10ms`, `1s`, `500us`: a length of time (`--p99-under`, `--ramp`).
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

pub(super) fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    humantime::parse_duration(text.trim())
        .map_err(|e| format!("'{text}' is not a duration like 10ms or 1s: {e}"))
}

/// `--warmup`: a count of events, or how long to warm up.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WarmupArg {
    /// This many events (`--warmup 20000`).
    Events(u64),
    /// Events until this long after the warm-up began (`--warmup 10s`).
    Time(std::time::Duration),
}

impl std::str::FromStr for WarmupArg {
    type Err = String;

    fn from_str(text: &str) -> Result<WarmupArg, String> {
        parse_warmup(text)
    }
}

pub(super) fn parse_warmup(text: &str) -> Result<WarmupArg, String> {
    let text = text.trim();
    if let Ok(events) = text.replace('_', "").parse::<u64>() {
        return Ok(WarmupArg::Events(events));
    }
    match humantime::parse_duration(text) {
        Ok(time) if !time.is_zero() => Ok(WarmupArg::Time(time)),
        _ => Err(format!(
            "'{text}' is neither a count of events (20000) nor a time (10s, 1m)"
        )),
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

pub(super) fn parse_rate(text: &str) -> Result<RateArg, String> {
    let number = |part: &str| {
        part.trim().replace('_', "").parse::<f64>().map_err(|_| {
            format!("'{text}' is not a rate: give operations per second, e.g. 5000 or 1000..20000")
        })
    };
    match text.split_once("..") {
        Some((from, to)) => Ok(RateArg {
            from: number(from)?,
            to: number(to)?,
        }),
        None => number(text).map(RateArg::fixed),
    }
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
