//! A study's cells: one `hatshop run` (or `load`) each, the server it needs, what it is
//! called, and whether an earlier attempt already finished it.

use std::path::Path;

use serde::Deserialize;

use crate::cluster::NodeBudget;
use crate::files::read_json;
use crate::report::loaded_run::read_rows;
use crate::report::study::{CellFacts, CellResult, CellStatus, MetricRow, NodesSeen};
use crate::report::sweep::{SEARCH_JSON, SearchAnswer};
use crate::result_dir::load_record::{BATCH_TRACES_CSV, BatchTrace, LOAD_JSON, LoadRecord};
use crate::result_dir::{self, RunStatus, SERVER_METRICS_CSV, SUMMARY_JSON, VERIFY_JSON};
use crate::stats::Summary;
use crate::verify::VerifyReport;

/// The command a cell runs.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verb {
    Run,
    Load,
    /// `run --find-max`: the highest rate whose response p99 keeps the objective.
    Search,
}

impl Verb {
    /// hatshop's verb for it.
    fn word(self) -> &'static str {
        match self {
            Verb::Run | Verb::Search => "run",
            Verb::Load => "load",
        }
    }
}

/// The server a cell runs against: started by the study unless it runs already.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerNeed {
    /// A name `hatshop server start` takes, or, where `url` is given, the store's
    /// scheme.
    pub server: String,
    /// The user's own server at this URL, which the study neither starts nor stops.
    pub url: Option<String>,
    pub nodes: usize,
    /// Started fresh for its cells (wiped before, stopped and wiped after), never one
    /// found running: a sweep's size of a cluster.
    pub fresh: bool,
    /// Store settings added to the server's URL (`rf=3&cl=QUORUM`).
    pub query: String,
    /// Server settings it must be started with (`hatshop server start --set`).
    pub set: Vec<(String, String)>,
    /// What each node may use of the host: cores and memory it cannot exceed, as on a
    /// machine of its own (no cap: the nodes share the host's cores and memory).
    pub budget: NodeBudget,
}

impl ServerNeed {
    /// The user's own database at `url`, of store `scheme`: only used.
    pub fn given(scheme: &str, url: &str) -> ServerNeed {
        ServerNeed {
            server: scheme.to_string(),
            url: Some(url.to_string()),
            nodes: 1,
            fresh: false,
            query: String::new(),
            set: Vec::new(),
            budget: NodeBudget::NONE,
        }
    }
}

/// One cell of a series: a run, search or load, and the server it needs.
#[derive(Debug, Clone)]
pub struct Cell {
    /// Its folder's name, unique in the study.
    pub id: String,
    pub part: String,
    /// What it is, most telling first: store, workload, the swept values.
    pub labels: Vec<(String, String)>,
    pub need: ServerNeed,
    pub verb: Verb,
    /// The flags after the verb, without `--db` and `--out`, which the study adds.
    pub args: Vec<String>,
    /// Events or rows: what the time-left estimate weighs it by.
    pub work: u64,
    /// A fault timeline (TOML) the run plays, written beside its folder.
    pub faults: Option<String>,
    /// The round of repeats it belongs to (1 where its group does not repeat).
    pub round: u64,
}

/// How long a run cell measures at least, whatever the scale, unless its file says
/// otherwise: 20 of the runs' 1 s intervals, so that each side of a comparison has the
/// 10 batches a named winner needs. Batches hold about equal operations, so a run whose
/// throughput climbs makes fewer batches than intervals (a third's climb over 13
/// intervals can leave 9).
pub const CELL_FLOOR: &str = "20s";

impl Cell {
    /// What warms a fresh server up with this cell's own load, unmeasured and
    /// unverified, into `dir` (thrown away after): a run of it for `secs`, or one pass
    /// of its load.
    pub fn warm_up_argv(&self, url: &str, dir: &Path, home: &Path, secs: u64) -> Vec<String> {
        // The cell's workload and store flags, without what sets its length (or, for
        // a search, makes it one).
        let length: &[&str] = match self.verb {
            Verb::Run | Verb::Search => &[
                "--events",
                "--warmup",
                "--duration",
                "--min-duration",
                "--interval",
                "--faults",
                "--p99-under",
            ],
            Verb::Load => &["--repeat", "--trace-sample"],
        };
        let mut args = Vec::new();
        let mut rest = self.args.iter();
        while let Some(arg) = rest.next() {
            if length.contains(&arg.as_str()) {
                rest.next();
            } else if arg != "--no-op-log" && arg != "--find-max" {
                // The op log is left out below for every run's warm-up.
                args.push(arg.clone());
            }
        }
        let mut argv = vec!["hatshop".to_string(), self.verb.word().to_string()];
        argv.extend(args);
        match self.verb {
            Verb::Run | Verb::Search => {
                argv.extend(
                    ["--events", "1000000000", "--warmup", "0", "--duration"].map(String::from),
                );
                argv.push(secs.to_string());
            }
            Verb::Load => argv.extend(["--repeat", "1"].map(String::from)),
        }
        argv.extend(["--db".into(), url.into(), "--out".into()]);
        argv.push(dir.display().to_string());
        argv.extend([
            "--home".into(),
            home.display().to_string(),
            "--recreate".into(),
        ]);
        if self.verb != Verb::Load {
            argv.extend(["--quiet", "--no-op-log"].map(String::from));
        }
        argv
    }

    /// The whole command line, as `hatshop` parses it.
    pub fn argv(&self, url: &str, dir: &Path, home: &Path) -> Vec<String> {
        let mut argv = vec!["hatshop".to_string(), self.verb.word().to_string()];
        argv.extend(self.args.iter().cloned());
        argv.extend(["--db".into(), url.into(), "--out".into()]);
        argv.push(dir.display().to_string());
        argv.extend(["--home".into(), home.display().to_string()]);
        if self.faults.is_some() {
            argv.extend(["--faults".into(), faults_file(dir).display().to_string()]);
        }
        match self.verb {
            Verb::Load => argv.push("--recreate".into()),
            // A run goes on from the tables the cell before it left, where that cell
            // sent a whole stream of the same shape: the series loads once. A
            // `--reuse-load` the user gave the series is each run's own.
            Verb::Run => {
                argv.extend(["--quiet", "--recreate"].map(String::from));
                if !self.args.iter().any(|arg| arg.starts_with("--reuse-load")) {
                    argv.push("--reuse-load=if-held".into());
                }
            }
            Verb::Search => argv.extend(["--quiet".into(), "--recreate".into()]),
        }
        if self.verified() {
            argv.push("--verify".into());
        }
        argv
    }

    /// Whether its run is verified: every run's is, on a store that keeps data.
    fn verified(&self) -> bool {
        let server = self.need.server.as_str();
        let scheme = crate::cluster::server_declarations(server).map_or(server, |k| k.store);
        self.verb != Verb::Load
            && crate::db::store_declarations(scheme).is_none_or(|store| store.holds_data)
    }

    /// The command as the page shows it: the server by name, not its address.
    pub fn shown(&self) -> String {
        if let Some(url) = &self.need.url {
            let db = crate::db::shown_url(&with_query(url, &self.need.query));
            return format!(
                "hatshop {} {} --db '{db}'",
                self.verb.word(),
                self.args.join(" ")
            );
        }
        let mut db = format!("<{}", self.need.server);
        if self.need.nodes > 1 {
            db.push_str(&format!(", {} nodes", self.need.nodes));
        }
        if !self.need.budget.is_none() {
            db.push_str(&format!(", {} each", self.need.budget.said()));
        }
        db.push('>');
        if !self.need.query.is_empty() {
            db.push_str(&format!("?{}", self.need.query));
        }
        format!(
            "hatshop {} {} --db '{db}'",
            self.verb.word(),
            self.args.join(" ")
        )
    }

    /// The cell's name in progress lines: as its page names it, and its nodes' budget
    /// where they have one.
    pub fn name(&self) -> String {
        let name = crate::report::study::cell_name(&self.labels);
        if self.need.budget.is_none() {
            return name;
        }
        format!("{name} · {} per node", self.need.budget.said())
    }

    /// Whether its folder holds a finished run (verified) or load (checked), so that a
    /// resumed study keeps it.
    pub fn finished(&self, dir: &Path) -> bool {
        match self.verb {
            Verb::Run => {
                result_dir::load_complete(dir).is_ok_and(|r| r.ran_its_plan())
                    && (!self.verified() || result_dir::file(dir, VERIFY_JSON).exists())
            }
            Verb::Load => read_json::<LoadRecord>(&dir.join(LOAD_JSON))
                .is_ok_and(|r| r.status == RunStatus::Finished),
            Verb::Search => read_json::<SearchAnswer>(&dir.join(SEARCH_JSON)).is_ok(),
        }
    }

    /// The cell as its page shows it, read from its folder (`study_dir/id`).
    pub fn result(&self, study_dir: &Path) -> CellResult {
        let dir = study_dir.join(&self.id);
        let failed = crate::files::read_own(&failure_file(&dir), 1 << 20)
            .ok()
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned());
        let (status, rows) = if let Some(why) = failed {
            (CellStatus::Failed(why.trim().to_string()), Vec::new())
        } else if !dir.exists() {
            (CellStatus::NotRun, Vec::new())
        } else if !self.finished(&dir) {
            (CellStatus::CutShort, Vec::new())
        } else {
            match self.verb {
                Verb::Run => run_result(&dir),
                Verb::Load => load_result(&dir),
                Verb::Search => search_result(&dir),
            }
        };
        let facts = match self.verb {
            Verb::Run => result_dir::load(&dir).ok().map(|r| CellFacts {
                nodes_seen: read_rows(&result_dir::file(&dir, SERVER_METRICS_CSV))
                    .ok()
                    .and_then(|rows| NodesSeen::of(&rows)),
                ..CellFacts::of(&r)
            }),
            Verb::Load => read_json::<LoadRecord>(&dir.join(LOAD_JSON))
                .ok()
                .map(|r| CellFacts::of_load(&r)),
            // Each of a search's rates is a run of its own, with facts of its own.
            Verb::Search => None,
        };
        // A cell's spread within its run, for the figures' tests; a load has none.
        let intervals = match self.verb {
            Verb::Run if !rows.is_empty() => {
                crate::report::intervals::read(&dir).unwrap_or_default()
            }
            _ => Vec::new(),
        };
        CellResult {
            id: self.id.clone(),
            part: self.part.clone(),
            labels: self.labels.clone(),
            command: self.shown(),
            dir: self.id.clone().into(),
            counted: !rows.is_empty(),
            status,
            rows,
            facts,
            intervals,
        }
    }
}

fn run_result(dir: &Path) -> (CellStatus, Vec<MetricRow>) {
    let summary = match result_dir::seal::read_json::<Summary>(dir, SUMMARY_JSON) {
        Ok(summary) => summary,
        Err(_) if !dir.join(SUMMARY_JSON).exists() => {
            return (CellStatus::Lacks(SUMMARY_JSON), Vec::new());
        }
        Err(e) => return (CellStatus::Unreadable(format!("{e:#}")), Vec::new()),
    };
    let verified = read_json::<VerifyReport>(&result_dir::file(dir, VERIFY_JSON));
    let status = CellStatus::Ran(verified.as_ref().ok().map(VerifyReport::verdict));
    let mut rows = MetricRow::rows_of(&summary);
    if let (Ok(report), Some(all)) = (&verified, rows.first_mut()) {
        all.lost_silently = report.lost_updates + report.resurrected_orders;
    }
    (status, rows)
}

/// A search's answer: its highest rate under the objective, as the cell's throughput.
fn search_result(dir: &Path) -> (CellStatus, Vec<MetricRow>) {
    let Ok(answer) = read_json::<SearchAnswer>(&dir.join(SEARCH_JSON)) else {
        return (CellStatus::Lacks(SEARCH_JSON), Vec::new());
    };
    let rows = answer
        .highest_under
        .map(|rate| MetricRow {
            event_type: "all".into(),
            response: true,
            ops_s: rate,
            ..MetricRow::default()
        })
        .into_iter()
        .collect();
    (CellStatus::Searched(answer), rows)
}

/// A load's batches as the study page draws them: every batch as hatshop timed it,
/// and the traced ones as hatshop and as the server timed them.
fn load_result(dir: &Path) -> (CellStatus, Vec<MetricRow>) {
    let Ok(record) = read_json::<LoadRecord>(&dir.join(LOAD_JSON)) else {
        return (CellStatus::Lacks(LOAD_JSON), Vec::new());
    };
    let latency = &record.totals.latency_ms;
    let mut rows = vec![MetricRow {
        event_type: "all".into(),
        ops: record.totals.batches,
        errors: record.totals.failed_batches,
        elapsed_s: record.totals.elapsed_s,
        ops_s: record.totals.rows_per_s,
        mean_us: latency.mean * 1000.0,
        p99_us: latency.p99 * 1000.0,
        max_us: latency.max * 1000.0,
        ..MetricRow::default()
    }];
    let traces: Vec<BatchTrace> =
        crate::report::loaded_run::read_rows(&dir.join(BATCH_TRACES_CSV)).unwrap_or_default();
    let traced: Vec<&BatchTrace> = traces.iter().filter(|t| t.server_us.is_some()).collect();
    let side = |name: &str, of: &dyn Fn(&BatchTrace) -> f64| {
        let values: Vec<f64> = traced.iter().map(|t| of(t)).collect();
        MetricRow {
            event_type: name.into(),
            ops: values.len() as u64,
            mean_us: values.iter().sum::<f64>() / values.len().max(1) as f64,
            max_us: values.iter().copied().fold(0.0, f64::max),
            ..MetricRow::default()
        }
    };
    if !traced.is_empty() {
        rows.push(side("client (hatshop)", &|t| t.client_us));
        rows.push(side("server (Cassandra's trace)", &|t| {
            t.server_us.unwrap_or_default()
        }));
    }
    let status = CellStatus::Loaded(record.check.as_ref().map(|check| check.ok));
    (status, rows)
}

/// `url` with the store settings `query` laid over its own: a setting both give takes
/// `query`'s value.
pub fn with_query(url: &str, query: &str) -> String {
    if query.is_empty() {
        return url.to_string();
    }
    let (base, own) = url.split_once('?').unwrap_or((url, ""));
    let key = |pair: &str| pair.split('=').next().unwrap_or_default().to_string();
    let over: Vec<String> = query.split('&').map(key).collect();
    let mut pairs: Vec<&str> = own
        .split('&')
        .filter(|pair| !pair.is_empty() && !over.contains(&key(pair)))
        .collect();
    pairs.extend(query.split('&'));
    format!("{base}?{}", pairs.join("&"))
}

/// Where a cell that failed keeps why, beside its folder, until it runs again.
pub fn failure_file(dir: &Path) -> std::path::PathBuf {
    beside(dir, "failed.txt")
}

/// Where a cell's fault timeline is written: beside its folder.
pub fn faults_file(dir: &Path) -> std::path::PathBuf {
    beside(dir, "faults.toml")
}

/// `dir.ending` beside `dir`: the whole folder name kept, dots and all (`rate=0.5-r1`).
fn beside(dir: &Path, ending: &str) -> std::path::PathBuf {
    let mut name = dir.file_name().unwrap_or_default().to_os_string();
    name.push(".");
    name.push(ending);
    dir.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_beside_a_cell_keep_its_whole_name() {
        let dir = Path::new("s/events=0.5-r1");
        assert_eq!(failure_file(dir), Path::new("s/events=0.5-r1.failed.txt"));
        assert_eq!(faults_file(dir), Path::new("s/events=0.5-r1.faults.toml"));
    }

    #[test]
    fn a_cells_settings_are_laid_over_the_urls_own() {
        assert_eq!(with_query("sqlite://x.db", ""), "sqlite://x.db");
        assert_eq!(
            with_query("mysql://h/db?pool=2&tls=off", "pool=8"),
            "mysql://h/db?tls=off&pool=8"
        );
        assert_eq!(with_query("redis://h", "pool=8"), "redis://h?pool=8");
    }

    #[test]
    fn a_cell_runs_with_its_server_and_folder_and_shows_the_server_by_name() {
        let cell = Cell {
            id: "random-mariadb".into(),
            part: "random".into(),
            labels: vec![("store".into(), "mariadb".into())],
            need: ServerNeed {
                server: "mariadb".into(),
                url: None,
                nodes: 1,
                fresh: false,
                query: "connections=4".into(),
                set: Vec::new(),
                budget: NodeBudget::NONE,
            },
            verb: Verb::Run,
            args: vec!["-w".into(), "hatshop-random".into()],
            work: 10,
            faults: None,
            round: 1,
        };
        let argv = cell.argv(
            "mysql://root@127.0.0.1:3306/hatshop?connections=4",
            Path::new("s/random-mariadb"),
            Path::new("/home"),
        );
        assert_eq!(argv[..4], ["hatshop", "run", "-w", "hatshop-random"]);
        assert!(argv.contains(&"--verify".to_string()));
        assert_eq!(
            cell.shown(),
            "hatshop run -w hatshop-random --db '<mariadb>?connections=4'"
        );
    }
}
