//! A study's cell groups made cells: each group's candidates crossed with its axes,
//! round after round where it repeats, each cell's settings laid (the study's, the
//! candidate's, the group's, the group's for that candidate, the axis values') and
//! said as the command, server and labels of one `hatshop run` or `load`.

use indexmap::IndexMap;
use serde::Deserialize;
use toml::Value;

use super::cells::{CELL_FLOOR, Cell, ServerNeed, Verb};
use super::settings::{Said, Settings, Word};
use super::{Candidate, Study};
use crate::cluster::NodeBudget;

/// A group of cells of one part, as the file writes it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CellGroup {
    part: String,
    /// Each cell's folder name, `{setting}` filled [default: the part, the axes'
    /// values and the candidate, joined by '-'].
    id: Option<String>,
    /// The candidates it runs [default: every one].
    #[serde(default)]
    candidates: Vec<String>,
    /// Labels beside the candidate's (`"workload: {workload}"`); one named `store`
    /// takes the candidate's place.
    #[serde(default)]
    labels: Vec<String>,
    #[serde(default)]
    set: Settings,
    /// Settings for one candidate's cells of the group only.
    #[serde(default, rename = "for")]
    per_candidate: IndexMap<String, Settings>,
    /// Axes, crossed (the first outermost); the settings of one value go in step.
    #[serde(default)]
    vary: Vec<Axis>,
    /// Runs of each cell, a round of every repeating group at a time, so that no
    /// cell's repeats run back to back: a whole number or a scaled one.
    repeats: Option<Value>,
    /// A fault timeline each cell plays: `at` a time, or a share of `duration`
    /// ("1/3").
    #[serde(default)]
    faults: Vec<toml::Table>,
}

/// One axis: its label's name, and its values.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Axis {
    label: String,
    values: Vec<AxisValue>,
}

/// One value of an axis: settings, and what its label says [default: the value of
/// its one setting].
#[derive(Debug, Deserialize)]
#[serde(from = "toml::Table")]
struct AxisValue {
    said: Option<String>,
    set: Settings,
}

impl From<toml::Table> for AxisValue {
    fn from(mut table: toml::Table) -> AxisValue {
        let said = match table.remove("label") {
            Some(Value::String(said)) => Some(said),
            Some(other) => Some(other.to_string()),
            None => None,
        };
        AxisValue {
            said,
            set: table.into(),
        }
    }
}

/// Settings that shape the cell rather than its flags.
const NOT_FLAGS: &[&str] = &[
    "verb",
    "nodes",
    "cpu_per_node",
    "memory_per_node",
    "workload",
    "events",
    "min-duration",
];

impl Study {
    /// Its cells at `scale`, in the file's order, a round at a time.
    pub fn cells(&self, scale: f64) -> Result<Vec<Cell>, String> {
        let rounds: Vec<Option<u64>> = self
            .cells
            .iter()
            .map(|group| group.rounds(scale))
            .collect::<Result<_, _>>()?;
        let most = rounds.iter().map(|r| r.unwrap_or(1)).max().unwrap_or(1);
        let mut cells = Vec::new();
        for round in 1..=most {
            for (group, rounds) in self.cells.iter().zip(&rounds) {
                let repeat = match rounds {
                    Some(n) if round <= *n => Some(round),
                    None if round == 1 => None,
                    _ => continue,
                };
                cells.extend(group.cells(self, scale, repeat)?);
            }
        }
        Ok(cells)
    }
}

impl CellGroup {
    /// How many rounds it runs, where it repeats.
    fn rounds(&self, scale: f64) -> Result<Option<u64>, String> {
        let Some(repeats) = &self.repeats else {
            return Ok(None);
        };
        let mut settings = toml::Table::new();
        settings.insert("repeats".into(), repeats.clone());
        let said = Settings::from(settings).said(scale, &[])?;
        match said.text("repeats").and_then(|n| n.parse::<u64>().ok()) {
            Some(n) if n >= 1 => Ok(Some(n)),
            _ => Err(format!(
                "part {}: repeats must be a whole number above 0",
                self.part
            )),
        }
    }

    fn cells(&self, study: &Study, scale: f64, repeat: Option<u64>) -> Result<Vec<Cell>, String> {
        let names: Vec<&String> = if self.candidates.is_empty() {
            study.candidates.keys().collect()
        } else {
            self.candidates.iter().collect()
        };
        if let Some(other) = self.per_candidate.keys().find(|k| !names.contains(k)) {
            return Err(format!(
                "part {}: [cells.for.{other}] names no candidate of the group{}",
                self.part,
                crate::suggest::did_you_mean(other, names.iter().map(|n| n.as_str()))
            ));
        }
        let mut cells = Vec::new();
        for name in names {
            let candidate = study.candidates.get(name).ok_or_else(|| {
                format!(
                    "part {}: no candidate named '{name}'{}",
                    self.part,
                    crate::suggest::did_you_mean(name, study.candidates.keys().map(String::as_str))
                )
            })?;
            let mut laid = study.set.with(&candidate.set).with(&self.set);
            if let Some(own) = self.per_candidate.get(name) {
                laid = laid.with(own);
            }
            for values in self.crossed() {
                let mut settings = laid.clone();
                for value in &values {
                    settings = settings.with(&value.set);
                }
                let cell = self
                    .cell(name, candidate, &settings, &values, scale, repeat)
                    .and_then(|cell| cell.judged_by(&study.slo))
                    .map_err(|e| format!("part {}, candidate {name}: {e}", self.part))?;
                cells.push(cell);
            }
        }
        Ok(cells)
    }

    /// Every combination of its axes' values, the first axis outermost.
    fn crossed(&self) -> Vec<Vec<&AxisValue>> {
        let mut combinations = vec![Vec::new()];
        for axis in &self.vary {
            combinations = combinations
                .into_iter()
                .flat_map(|before| {
                    axis.values.iter().map(move |value| {
                        let mut next = before.clone();
                        next.push(value);
                        next
                    })
                })
                .collect();
        }
        combinations
    }

    fn cell(
        &self,
        name: &str,
        candidate: &Candidate,
        settings: &Settings,
        values: &[&AxisValue],
        scale: f64,
        repeat: Option<u64>,
    ) -> Result<Cell, String> {
        let mut fixed = vec![("candidate", name.to_string())];
        if let Some(round) = repeat {
            fixed.push(("repeat", round.to_string()));
        }
        let said = settings.said(scale, &fixed)?;
        let fill = |text: &str| said.fill(text, &fixed);
        let mut labels = vec![(
            "store".to_string(),
            candidate.label.clone().unwrap_or_else(|| name.to_string()),
        )];
        for label in &self.labels {
            let (key, value) = label
                .split_once(':')
                .ok_or_else(|| format!("label '{label}': write it 'name: value'"))?;
            set_label(&mut labels, key.trim(), fill(value.trim())?);
        }
        for (axis, value) in self.vary.iter().zip(values) {
            let shown = match &value.said {
                Some(said) => fill(said)?,
                None => value.only_value(&said, &axis.label)?,
            };
            set_label(&mut labels, &axis.label, shown);
        }
        if let Some(round) = repeat {
            labels.push(("repeat".into(), round.to_string()));
        }
        let id = match &self.id {
            Some(id) => fill(id)?,
            None => {
                let mut parts = vec![self.part.clone()];
                parts.extend(labels.iter().skip(1).map(|(_, v)| v.clone()));
                parts.push(name.to_string());
                slug(&parts.join("-"))
            }
        };
        let id = match repeat {
            Some(round) if !self.id.as_deref().unwrap_or("").contains("{repeat}") => {
                format!("{id}-r{round}")
            }
            _ => id,
        };
        let verb = match said.text("verb").as_deref() {
            None | Some("run") => Verb::Run,
            Some("load") => Verb::Load,
            Some("search") => Verb::Search,
            Some(other) => return Err(format!("verb '{other}': give run, search or load")),
        };
        let (args, work) = command(verb, &said)?;
        Ok(Cell {
            id,
            part: self.part.clone(),
            labels,
            need: need(candidate, &said)?,
            verb,
            args,
            work,
            faults: self.faults_said(&said)?,
            round: repeat.unwrap_or(1),
        })
    }

    /// The fault timeline as a `--faults` file, each `at` a time.
    fn faults_said(&self, said: &Said) -> Result<Option<String>, String> {
        if self.faults.is_empty() {
            return Ok(None);
        }
        let mut out = Vec::new();
        for fault in &self.faults {
            let mut text = String::from("[[faults]]\n");
            for (key, value) in fault {
                let value = match (key.as_str(), value) {
                    ("at", Value::String(at)) => Value::String(fault_time(at, said)?),
                    _ => value.clone(),
                };
                text.push_str(&format!("{key} = {value}\n"));
            }
            out.push(text);
        }
        Ok(Some(out.join("\n")))
    }
}

impl Cell {
    /// The cell, judged by the objective `slo`: a run's run.json keeps the verdict and
    /// its summary the percentiles the objective reads; a search looks for the highest
    /// rate that keeps the objective's response p99.
    fn judged_by(mut self, slo: &[String]) -> Result<Cell, String> {
        match self.verb {
            Verb::Run => {
                for bound in slo {
                    self.args.extend(["--threshold".to_string(), bound.clone()]);
                }
            }
            Verb::Search => {
                let bound_us = p99_bound_us(slo).ok_or(
                    "a search looks for the highest rate whose response p99 keeps the objective: \
                     give the study's slo a bound such as \"p99<20ms\"",
                )?;
                self.args.extend([
                    "--find-max".to_string(),
                    "--p99-under".to_string(),
                    format!("{bound_us}us"),
                ]);
            }
            Verb::Load => {}
        }
        Ok(self)
    }
}

/// The objective's bound on all operations' response p99, µs.
fn p99_bound_us(slo: &[String]) -> Option<f64> {
    use crate::stats::threshold::{Clock, LatencyStat, Op, Stat};
    slo.iter()
        .filter_map(|bound| crate::cli::threshold::threshold(bound).ok())
        .find(|t| {
            t.scope == "all"
                && matches!(t.op, Op::Below | Op::AtMost)
                && matches!(&t.stat, Stat::Latency(Clock::Response, LatencyStat::Percentile(label, _)) if label == "p99")
        })
        .map(|t| t.bound)
}

impl AxisValue {
    /// The value of its one setting, as its label; a value of several needs a label.
    fn only_value(&self, said: &Said, axis: &str) -> Result<String, String> {
        let mut keys = self.set.keys();
        match (keys.next(), keys.next()) {
            (Some(key), None) => Ok(said.text(key).unwrap_or_default()),
            _ => Err(format!(
                "axis '{axis}': a value that sets more or less than one setting needs a label"
            )),
        }
    }
}

/// Puts `key: value` in its place, or last.
fn set_label(labels: &mut Vec<(String, String)>, key: &str, value: String) {
    match labels.iter_mut().find(|(k, _)| k == key) {
        Some(label) => label.1 = value,
        None => labels.push((key.to_string(), value)),
    }
}

/// A folder name of words: lowercase letters, digits and '-'.
fn slug(words: &str) -> String {
    let mut slug = String::new();
    for c in words.chars() {
        if c.is_ascii_alphanumeric() || c == '.' {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.ends_with('-') {
            slug.push('-');
        }
    }
    slug.trim_matches('-').to_string()
}

/// The flags after the verb, and the work the time-left estimate weighs it by.
fn command(verb: Verb, said: &Said) -> Result<(Vec<String>, u64), String> {
    let mut args = Vec::new();
    let number = |key: &str| said.text(key).and_then(|n| n.parse::<u64>().ok());
    let work = match verb {
        // Each rate it tries runs for its duration (10 s unless given), whatever the
        // events a run cell is given: about ten rates.
        Verb::Search => {
            let workload = said.text("workload").ok_or("a search needs a workload")?;
            args.extend(["-w".into(), workload]);
            let step = said.text("duration").map_or(Ok(10.0), |t| seconds(&t))?;
            step as u64 * 300 * 10
        }
        Verb::Run => {
            let workload = said.text("workload").ok_or("a run needs a workload")?;
            let events = said.text("events").ok_or("a run needs events")?;
            args.extend(["-w".into(), workload, "--events".into(), events]);
            match said.0.get("min-duration") {
                None => args.extend(["--min-duration".into(), CELL_FLOOR.into()]),
                Some(Word::Switch(false)) => {}
                Some(floor) => args.extend(["--min-duration".into(), floor.text()]),
            }
            // A run for a time weighs about what 300 events a second would.
            match said.text("duration") {
                Some(time) => seconds(&time)? as u64 * 300,
                None => number("events").unwrap_or(0),
            }
        }
        Verb::Load => number("rows").unwrap_or(1) * number("repeat").unwrap_or(1),
    };
    for (key, word) in &said.0 {
        if NOT_FLAGS.contains(&key.as_str()) || key.starts_with("db.") || key.starts_with("server.")
        {
            continue;
        }
        match word {
            Word::Switch(true) => args.push(format!("--{key}")),
            Word::Switch(false) => {}
            Word::Text(value) => args.extend([format!("--{key}"), value.clone()]),
        }
    }
    Ok((args, work))
}

/// The server a cell needs, from its candidate and settings.
fn need(candidate: &Candidate, said: &Said) -> Result<ServerNeed, String> {
    let prefixed = |prefix: &str| -> Vec<(String, String)> {
        said.0
            .iter()
            .filter_map(|(k, v)| Some((k.strip_prefix(prefix)?.to_string(), v.text())))
            .collect()
    };
    let query: Vec<String> = prefixed("db.")
        .into_iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let nodes = match said.text("nodes") {
        None => 1,
        Some(n) => n
            .parse::<usize>()
            .ok()
            .filter(|n| *n >= 1)
            .ok_or(format!("nodes '{n}': give a whole number above 0"))?,
    };
    let cores = match said.given("cpu_per_node") {
        None => None,
        Some(cores) => Some(cpu_per_node(&cores)?),
    };
    let memory = match said.given("memory_per_node") {
        None => None,
        Some(size) => Some(
            crate::cluster::budget::memory::check(&size)
                .map_err(|e| format!("memory_per_node: {e:#}"))?,
        ),
    };
    Ok(ServerNeed {
        server: candidate.server.clone(),
        url: candidate.url.clone(),
        nodes,
        fresh: false,
        query: query.join("&"),
        set: prefixed("server."),
        budget: NodeBudget { cores, memory },
    })
}

/// Cores per node: a number, or `fit N`: each of N nodes an equal share of the host's
/// cores beside the client (half a core kept for it and the system), at most a core
/// each, in twentieths of one.
fn cpu_per_node(said: &str) -> Result<f64, String> {
    let cores = match said.strip_prefix("fit ") {
        Some(nodes) => {
            let nodes: f64 = nodes
                .trim()
                .parse()
                .map_err(|_| format!("cpu_per_node '{said}': write fit N, N nodes"))?;
            let host = crate::procfs::cores() as f64;
            let share = ((host - 0.5) / nodes).clamp(0.1, 1.0);
            (share * 20.0).floor() / 20.0
        }
        None => said
            .parse()
            .map_err(|_| format!("cpu_per_node '{said}': give cores (0.5) or fit N"))?,
    };
    crate::cluster::budget::cpu::check(cores).map_err(|e| format!("{e:#}"))
}

/// `90`, `90s`: seconds.
fn seconds(time: &str) -> Result<f64, String> {
    time.trim_end_matches('s')
        .parse()
        .map_err(|_| format!("'{time}': give seconds"))
}

/// A fault's `at`: a time, or a share of the cell's `duration` ("1/3").
fn fault_time(at: &str, said: &Said) -> Result<String, String> {
    let Some((over, under)) = at.split_once('/') else {
        return Ok(at.to_string());
    };
    let share = match (over.trim().parse::<f64>(), under.trim().parse::<f64>()) {
        (Ok(over), Ok(under)) if under > 0.0 => over / under,
        _ => {
            return Err(format!(
                "fault at '{at}': give a time (30s) or a share (1/3)"
            ));
        }
    };
    let duration = said.text("duration").ok_or(format!(
        "fault at '{at}': a share of what? the cell has no duration"
    ))?;
    Ok(format!("{:.0}s", seconds(&duration)? * share))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_share_of_the_duration_is_a_time_and_fit_shares_the_host() {
        let said = Settings::from(toml::from_str::<toml::Table>("duration = 90").unwrap())
            .said(1.0, &[])
            .unwrap();
        assert_eq!(fault_time("1/3", &said).unwrap(), "30s");
        assert_eq!(fault_time("2/3", &said).unwrap(), "60s");
        assert_eq!(fault_time("10s", &said).unwrap(), "10s");
        let share = cpu_per_node("fit 5").unwrap();
        assert!(share * 5.0 <= crate::procfs::cores() as f64, "{share}");
        assert!(cpu_per_node("fit").is_err());
    }

    #[test]
    fn a_slug_is_a_folder_name() {
        assert_eq!(
            slug("in-flight-4 in flight-PG 15"),
            "in-flight-4-in-flight-pg-15"
        );
    }
}
