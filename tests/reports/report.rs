//! Reports, comparisons and sweeps of real SQLite runs, read back the way a person or
//! another tool would: the HTML's numbers, the HdrHistogram log, the CSVs, and the page
//! as headless Chromium renders it.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;

use hatshop::report::hlog;
use serde_json::Value;

use common::browser::{Layout, chromium, layout, screenshot};
use common::{hatshop, json, run_ok, text};
use tempfile::TempDir;

fn run(tmp: &TempDir, name: &str, extra: &[&str]) -> PathBuf {
    let out = tmp.path().join(name);
    let interval = if extra.contains(&"--interval") {
        &[][..]
    } else {
        &["--interval", "0.05"][..]
    };
    hatshop(tmp.path())
        .args(["run", "--quiet"])
        .args(interval)
        .arg("--out")
        .arg(&out)
        .args(extra)
        .assert()
        .success();
    out
}

/// `data-row="E" … data-field="F" data-value="V"` cells of the report's latency table:
/// each number, as data, with its row's event type and its column's key.
fn report_cells(html: &str) -> Vec<(String, String, f64)> {
    let mut cells = Vec::new();
    let table = &html[html.find(r#"<table id="latency">"#).unwrap()..];
    let table = &table[..table.find("</table>").unwrap()];
    for row in table.split("<tr").skip(2) {
        let event = row
            .split(r#"data-row=""#)
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        for cell in row.split(r#"data-field=""#).skip(1) {
            let field = cell.split('"').next().unwrap();
            let Some(value) = cell
                .split('>')
                .next()
                .unwrap()
                .split(r#"data-value=""#)
                .nth(1)
            else {
                continue;
            };
            let value = value.split('"').next().unwrap();
            cells.push((event.to_string(), field.to_string(), value.parse().unwrap()));
        }
    }
    cells
}

#[test]
fn the_report_shows_the_numbers_of_summary_json() {
    let tmp = TempDir::new().unwrap();
    let out = run(&tmp, "r", &["--events", "5000"]);
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let summary = json(&out.join("summary.json"));
    let mut rows: Vec<&Value> = summary["events"].as_array().unwrap().iter().collect();
    rows.push(&summary["overall"]);
    let cells = report_cells(&html);
    // count, errors, ops/s, mean, the ladder of seven and max.
    assert_eq!(cells.len(), rows.len() * 12, "{cells:?}");
    for (event, field, value) in cells {
        let row = rows
            .iter()
            .find(|r| r["event_type"] == event.as_str())
            .unwrap();
        let expected = match field.as_str() {
            "ops_s" => row["throughput_ops_s"].as_f64().unwrap(),
            "count" | "errors" | "mean_us" | "max_us" => row[&field].as_f64().unwrap(),
            percentile => {
                let label = percentile.strip_suffix("_us").unwrap();
                row["percentiles_us"][label].as_f64().unwrap()
            }
        };
        // Latencies to the nanosecond, throughput to a tenth.
        let to = if field == "ops_s" { 0.051 } else { 0.0015 };
        assert!(
            (value - expected).abs() < to,
            "{event} {field}: {value} vs {expected}"
        );
    }
    // The whole summary rides along as data.
    let embedded = html
        .split(r#"<script type="application/json" id="hatshop-summary">"#)
        .nth(1)
        .unwrap();
    let embedded: Value =
        serde_json::from_str(embedded.split("</script>").next().unwrap()).unwrap();
    assert_eq!(embedded, summary);
    // `hatshop report` writes the same page again.
    std::fs::remove_file(out.join("report.html")).unwrap();
    hatshop(tmp.path())
        .arg("report")
        .arg(&out)
        .assert()
        .success();
    assert!(
        std::fs::read_to_string(out.join("report.html"))
            .unwrap()
            .contains("Percentile spectrum")
    );
}

/// Each lane's share of the measured work, as sysbench's "threads fairness": run.json
/// keeps the spread of the lanes' operations (adding up to the run's) and busy time,
/// and the report says it.
#[test]
fn the_lanes_share_of_the_work_is_in_run_json_and_the_report() {
    let tmp = TempDir::new().unwrap();
    let out = run(&tmp, "lanes", &["--events", "4000", "-c", "4"]);
    let record = json(&out.join("run.json"));
    let fairness = &record["fairness"];
    assert_eq!(fairness["lanes"], 4, "{fairness}");
    let ops = &fairness["ops"];
    let mean = ops["mean"].as_f64().unwrap();
    assert_eq!(
        mean * 4.0,
        record["measured_ops"].as_f64().unwrap(),
        "{fairness}"
    );
    assert!(ops["min"].as_f64().unwrap() <= mean && mean <= ops["max"].as_f64().unwrap());
    assert!(ops["stddev"].as_f64().unwrap() >= 0.0);
    let busy = &fairness["busy_s"];
    assert!(busy["min"].as_f64().unwrap() > 0.0, "{fairness}");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let said = html
        .split("4 lanes: ")
        .nth(1)
        .expect("the report says how the 4 lanes shared the work");
    let said = &said[..said.find('<').unwrap()];
    assert!(
        said.contains(" measured operations each (") && said.ends_with("% of the measured phase"),
        "{said}"
    );
}

#[test]
fn verify_brings_the_folders_page_up_to_date() {
    let tmp = TempDir::new().unwrap();
    let out = run(&tmp, "verified", &["--events", "300"]);
    let page = || std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(page().contains("not verified"));
    hatshop(tmp.path())
        .arg("verify")
        .arg(&out)
        .assert()
        .success()
        .stdout(predicates::str::contains("report: "));
    let page = page();
    assert!(!page.contains("not verified"));
    // What runs at once is said in one word, the flag's (not "1 lanes").
    assert!(page.contains("concurrency 1, closed loop"), "{page}");
    assert!(page.contains(r#"<span class="ok">exact</span>"#), "{page}");
}

#[test]
fn latency_hlog_round_trips_to_the_summary_counts() {
    let tmp = TempDir::new().unwrap();
    let out = run(&tmp, "h", &["--events", "5000"]);
    let text = std::fs::read_to_string(out.join("latency.hlog")).unwrap();
    assert!(
        text.contains("#[StartTime: ") && text.contains("Tag=create_order,"),
        "{}",
        &text[..300]
    );
    let logged = hlog::read(&out).unwrap();
    let summary = json(&out.join("summary.json"));
    for event in summary["events"].as_array().unwrap() {
        let tag = event["event_type"].as_str().unwrap();
        let histogram = hlog::merged(&logged, Some(tag));
        assert_eq!(histogram.len(), event["ok"].as_u64().unwrap(), "{tag}");
        let max_us = histogram.max() as f64 / 1_000.0;
        assert!(
            (max_us - event["max_us"].as_f64().unwrap()).abs() < 0.0015,
            "{tag}"
        );
    }
    assert_eq!(
        hlog::merged(&logged, None).len(),
        summary["overall"]["ok"].as_u64().unwrap()
    );
    // intervals.csv adds up to the same totals.
    let mut csv = csv::Reader::from_path(out.join("intervals.csv")).unwrap();
    let all_ops: u64 = csv
        .records()
        .map(Result::unwrap)
        .filter(|r| &r[1] == "all")
        .map(|r| r[2].parse::<u64>().unwrap())
        .sum();
    assert_eq!(all_ops, summary["ops"].as_u64().unwrap());
}

/// Run #2's line under compare's "throughput of all operations against #1".
fn throughput_line(text: &str) -> &str {
    text.lines()
        .skip_while(|l| !l.starts_with("throughput of all operations against #1"))
        .find(|l| l.trim_start().starts_with("#2 "))
        .unwrap_or_default()
}

/// Run #2's line under compare's "response p99 of all operations against #1".
fn response_line(text: &str) -> &str {
    text.lines()
        .skip_while(|l| !l.starts_with("response p99 of all operations against #1"))
        .find(|l| l.trim_start().starts_with("#2 "))
        .unwrap_or_default()
}

#[test]
fn compare_tests_paced_runs_on_their_response_p99() {
    let tmp = TempDir::new().unwrap();
    // At 400/s, SQLite with an fsync per commit, and without.
    let paced = |name: &str, synchronous: &str| {
        let db = format!("sqlite://{name}.db?synchronous={synchronous}");
        let flags = ["--events", "2000", "--rate", "400", "--interval", "0.1"];
        run(&tmp, name, &[&flags[..], &["--db", &db]].concat())
    };
    let (fast, slow) = (paced("fast", "off"), paced("slow", "full"));
    let compare = |a: &Path, b: &Path| {
        let out = hatshop(tmp.path())
            .arg("compare")
            .args([a, b])
            .args(["-o", "paced.html"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let same = compare(&fast, &fast);
    assert!(
        response_line(&same).contains("1.00×, no significant difference (p = 1.000"),
        "{same}"
    );
    let page = std::fs::read_to_string(tmp.path().join("paced.html")).unwrap();
    assert!(page.contains(r#"<table id="response-p99">"#), "{page}");
    // Each run's number is its own summary's response p99, and the ratio theirs.
    let p99 = |dir: &Path| {
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap())
                .unwrap();
        summary["overall"]["response"]["percentiles_us"]["p99"]
            .as_f64()
            .unwrap()
    };
    let apart = compare(&fast, &slow);
    let line = response_line(&apart);
    let shown: f64 = line
        .split_whitespace()
        .nth(1)
        .unwrap_or_default()
        .replace(',', "")
        .parse()
        .unwrap_or(f64::NAN);
    assert!(
        (shown - p99(&slow)).abs() <= 0.5 + p99(&slow) * 1e-3,
        "{line}"
    );
    let ratio = format!("{:.2}×", p99(&slow) / p99(&fast));
    assert!(line.contains(&ratio), "{ratio}: {line}");
}

#[test]
fn compare_finds_no_difference_with_itself_and_a_real_one_with_fsync() {
    let tmp = TempDir::new().unwrap();
    // A pair of runs, SQLite without and with an fsync per commit: about 7 times apart.
    let pair = |attempt: usize| {
        let timed = |name: &str, synchronous: &str| {
            let db = format!("sqlite://{name}{attempt}.db?synchronous={synchronous}");
            run(
                &tmp,
                &format!("{name}{attempt}"),
                // The fast run lasts ~0.3 s: enough intervals that, after their
                // autocorrelation (high on a busy machine), the test still has two
                // independent ones.
                &["--events", "20000", "--db", &db, "--interval", "0.01"],
            )
        };
        (timed("fast", "off"), timed("slow", "full"))
    };
    let (fast, slow) = pair(0);
    let same = hatshop(tmp.path())
        .arg("compare")
        .arg(&fast)
        .arg(&fast)
        .args(["-o", "same.html"])
        .output()
        .unwrap();
    assert!(same.status.success());
    let text = String::from_utf8(same.stdout).unwrap();
    // The latency table's rows (the throughput lines below it are indented).
    let second_rows: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(" #2 ") && !l.starts_with("  #"))
        .collect();
    assert_eq!(second_rows.len(), 7, "{text}"); // six event types and all
    for line in second_rows {
        assert!(
            line.contains(" 1.00 ") && line.contains("no significant difference"),
            "{line}"
        );
    }
    assert!(!text.contains("warning"));
    assert!(
        text.contains("what differs: nothing run.json records"),
        "{text}"
    );
    // Throughput is tested too, its ratio given with its interval.
    let throughput = throughput_line(&text);
    assert!(
        throughput.contains("1.00×, no significant difference (p = 1.000, 95 % CI "),
        "{text}"
    );
    let page = std::fs::read_to_string(tmp.path().join("same.html")).unwrap();
    assert!(page.contains(r#"<td data-field="ratio" data-value="1.00">1.00</td>"#));
    assert!(page.contains(r#"<table id="throughput">"#), "{page}");
    assert!(page.contains("Throughput over time, all operations"));

    let compare_apart = |fast: &Path, slow: &Path| {
        let apart = hatshop(tmp.path())
            .arg("compare")
            .arg(fast)
            .arg(slow)
            .args(["-o", "apart.html"])
            .output()
            .unwrap();
        String::from_utf8(apart.stdout).unwrap()
    };
    let found_slower = |text: &str| {
        let all_row = text
            .lines()
            .skip_while(|l| !l.starts_with("all "))
            .nth(1)
            .unwrap_or_default();
        // `significant: 7.41× slower (95 % CI 6.90–7.95×)`; a few percent between
        // like runs can be significant too, so the size counts as well.
        let times = all_row
            .split("significant: ")
            .nth(1)
            .and_then(|rest| rest.split_once("× slower"))
            .and_then(|(times, _)| times.parse::<f64>().ok());
        // And run #2's throughput, significantly below run #1's, with its interval.
        let throughput = throughput_line(text)
            .split("significant: ")
            .nth(1)
            .and_then(|rest| rest.split_once("× run #1's throughput (p "))
            .and_then(|(times, rest)| Some((times.parse::<f64>().ok()?, rest)));
        !all_row.contains("no significant")
            && times.is_some_and(|times| times > 2.0)
            && throughput.is_some_and(|(times, rest)| times < 0.5 && rest.contains("95 % CI"))
    };
    // The machine is shared: a stall of a second or two during one run (CI's servers
    // flushing) can leave too few independent intervals to test, so a real difference
    // gets up to three pairs. A compare that cannot see it fails all three.
    let mut text = compare_apart(&fast, &slow);
    let mut seen = Vec::new();
    for attempt in 1..3 {
        if found_slower(&text) {
            break;
        }
        seen.push(text);
        let (fast, slow) = pair(attempt);
        text = compare_apart(&fast, &slow);
    }
    assert!(found_slower(&text), "{seen:#?}\n{text}");
    // It says what differs, and names each run by it.
    assert!(text.contains("  synchronous: off → full\n"), "{text}");
    let page = std::fs::read_to_string(tmp.path().join("apart.html")).unwrap();
    assert!(
        page.contains("<code>synchronous: off → full</code>"),
        "{page}"
    );
    assert!(page.contains("#2 synchronous=full"), "{page}");

    // Different streams are compared, with a warning.
    let other = run(&tmp, "other", &["--events", "4000", "--seed", "9"]);
    let mixed = hatshop(tmp.path())
        .arg("compare")
        .arg(&fast)
        .arg(&other)
        .args(["-o", "mixed.html"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8(mixed.stdout)
            .unwrap()
            .contains("warning: these runs replayed different event streams")
    );
    assert!(
        std::fs::read_to_string(tmp.path().join("mixed.html"))
            .unwrap()
            .contains("different event streams")
    );
}

#[test]
fn a_sweep_of_two_values_and_two_repeats_makes_four_runs() {
    let tmp = TempDir::new().unwrap();
    hatshop(tmp.path())
        .args([
            "sweep",
            "-w",
            "creates",
            "--vary",
            "events=200,400",
            "--repeat",
            "2",
            "--out",
            "sweep",
        ])
        .assert()
        .success();
    let dir = tmp.path().join("sweep");
    let runs = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|path| path.is_dir() && !path.ends_with("figures"))
        .count();
    assert_eq!(runs, 4);
    // Each figure's numbers beside the page, one row per bar: 2 values × 1 database.
    let mut throughput =
        csv::Reader::from_path(dir.join("figures/sweep-02-throughput-by-events.csv")).unwrap();
    assert_eq!(
        throughput.headers().unwrap(),
        vec![
            "series",
            "events",
            "operations per second",
            "whisker low",
            "whisker high"
        ]
    );
    let bars: Vec<csv::StringRecord> = throughput.records().map(Result::unwrap).collect();
    assert_eq!(
        bars.iter().map(|r| &r[1]).collect::<Vec<_>>(),
        ["200", "400"]
    );
    let mut csv = csv::Reader::from_path(dir.join("sweep.csv")).unwrap();
    let headers = csv.headers().unwrap().clone();
    let rows: Vec<csv::StringRecord> = csv.records().map(Result::unwrap).collect();
    // A row per run for all operations, and one per event type (creates only here).
    assert_eq!(rows.len(), 8);
    let column = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let (value, event_type, ops) = (column("value"), column("event_type"), column("ops"));
    let all: Vec<(&str, &str)> = rows
        .iter()
        .filter(|r| &r[event_type] == "all")
        .map(|r| (&r[value], &r[ops]))
        .collect();
    assert_eq!(
        all,
        [
            ("200", "200"),
            ("200", "200"),
            ("400", "400"),
            ("400", "400")
        ]
    );
    assert!(
        rows.iter()
            .filter(|r| &r[event_type] == "create_order")
            .all(|r| r[ops] == r[value])
    );
    let html = std::fs::read_to_string(dir.join("sweep.html")).unwrap();
    assert_eq!(
        html.matches(r#"class="whisker""#).count(),
        10,
        "(4 charts of all operations + 1 per event type) × 2 values"
    );
    // The page opens with what ran and ends with the table of its numbers.
    let what_ran = &html[html.find(r#"<table class="facts" id="what-ran">"#).unwrap()..];
    let what_ran = &what_ran[..what_ran.find("</table>").unwrap()];
    for said in [
        "<b>events</b>: 200, 400",
        "2 per value and database (4 in all)",
        "creates",
    ] {
        assert!(what_ran.contains(said), "{said}: {what_ran}");
    }
    assert!(html.find("what-ran") < html.find("<svg"));
    assert!(html.rfind("<svg") < html.find(r#"<table id="sweep">"#));

    // The same command again resumes it: the four runs are kept as they are.
    let first_run = std::fs::read(dir.join("events=200-r1/run.json")).unwrap();
    let again = hatshop(tmp.path())
        .args(["sweep", "-w", "creates", "--vary", "events=200,400"])
        .args(["--repeat", "2", "--out", "sweep"])
        .output()
        .unwrap();
    assert!(again.status.success());
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(
        stderr.contains("4 of the sweep's 4 runs finished earlier, kept"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(dir.join("events=200-r1/run.json")).unwrap(),
        first_run
    );
    // Another sweep into its folder is refused, in one line.
    let other = hatshop(tmp.path())
        .args(["sweep", "--vary", "events=300", "--out", "sweep"])
        .output()
        .unwrap();
    assert_eq!(other.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&other.stderr);
    assert!(
        stderr.contains("holds sweep events=200,400: resume it with the same command"),
        "{stderr}"
    );
}

/// A store that keeps nothing (null://) runs a sweep's cells unverified: there is
/// nothing to verify, and no cell fails for it.
#[test]
fn a_sweep_on_a_store_that_keeps_nothing_runs_unverified() {
    let tmp = TempDir::new().unwrap();
    let output = hatshop(tmp.path())
        .args(["sweep", "--db", "null://", "--vary", "concurrency=1,2"])
        .args(["--events", "300", "--out", "sweep"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let dir = tmp.path().join("sweep");
    for run in ["concurrency=1-r1", "concurrency=2-r1"] {
        assert!(dir.join(run).join("run.json").exists(), "{run}");
        assert!(!dir.join(run).join("verify.json").exists(), "{run}");
    }
}

#[test]
#[ignore = "needs chromium: ./test.sh installs it"]
fn the_report_renders_in_headless_chromium_with_every_chart_drawn() {
    let tmp = TempDir::new().unwrap();
    let out = run(&tmp, "shot", &["--events", "20000", "--verify"]);
    let page = format!("file://{}", out.join("report.html").display());
    let keep = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-screenshot");
    std::fs::create_dir_all(&keep).unwrap();
    let png = keep.join("report.png");
    let _ = std::fs::remove_file(&png);

    let shot = chromium(
        &[
            "--window-size=940,4200",
            &format!("--screenshot={}", png.display()),
            &page,
        ],
        &tmp.path().join("profile-1"),
    );
    assert!(
        shot.status.success(),
        "{}",
        String::from_utf8_lossy(&shot.stderr)
    );
    let bytes = std::fs::read(&png).expect("a screenshot");
    assert!(
        bytes.starts_with(b"\x89PNG") && bytes.len() > 50_000,
        "{} bytes",
        bytes.len()
    );
    let log = String::from_utf8_lossy(&shot.stderr);
    for line in log.lines() {
        assert!(
            !(line.contains("CONSOLE")
                || line.contains("Uncaught")
                || line.contains(":ERROR:CONSOLE")),
            "console output from the page: {line}"
        );
    }

    let dom = chromium(&["--dump-dom", &page], &tmp.path().join("profile-2"));
    let dom = String::from_utf8(dom.stdout).unwrap();
    let charts: Vec<&str> = dom.split(r#"<svg class="chart "#).skip(1).collect();
    let summary = json(&out.join("summary.json"));
    let event_types = summary["events"].as_array().unwrap().len();
    // The resource charts appear once the run lasts a second (sampled once a second):
    // on a busy machine this run does.
    let resources = dom
        .split("<h2>Server resources</h2>")
        .nth(1)
        .map_or(0, |rest| {
            let section = &rest[..rest.find("<h2").unwrap_or(rest.len())];
            section.matches(r#"<svg class="chart "#).count()
        });
    // bars, latency over time (all + each type), throughput, spectrum
    assert_eq!(
        charts.len(),
        1 + 1 + event_types + 1 + 1 + resources,
        "{} charts, {resources} of them resources",
        charts.len()
    );
    for chart in &charts {
        let chart = &chart[..chart.find("</svg>").unwrap()];
        let drawn =
            chart.matches(r#"class="series""#).count() + chart.matches(r#"class="bar""#).count();
        assert!(
            drawn > 0,
            "an empty chart: {}",
            &chart[..200.min(chart.len())]
        );
        assert!(!chart.contains("NaN"), "NaN in a chart");
    }
    assert!(dom.contains("exact"), "the verify result is shown");
}

#[test]
#[ignore = "needs chromium: ./test.sh installs it"]
fn the_layout_check_finds_text_outside_a_chart_and_a_page_too_wide() {
    let tmp = TempDir::new().unwrap();
    let page = tmp.path().join("bad.html");
    std::fs::write(
        &page,
        r#"<html><body style="width:600px"><figure class="chart"><svg class="chart" viewBox="0 0 200 100" width="200" height="100"><title>bad</title><text x="150" y="50">far too long a label to fit</text><text x="10" y="50">one</text><text x="12" y="52">two</text></svg><figcaption><span class="key">k</span></figcaption></figure><table><tr><td style="white-space:nowrap">a cell far too wide for its page, a cell far too wide for its page, a cell far too wide for its page, wider still</td></tr></table></body></html>"#,
    )
    .unwrap();
    let Layout {
        charts, problems, ..
    } = layout(&page, 1000, &tmp.path().join("profile"));
    assert_eq!(charts, 1);
    let has = |needle: &str| problems.iter().any(|p| p.contains(needle));
    assert!(
        has("\"far too long a label to fit\" runs outside the chart"),
        "{problems:?}"
    );
    assert!(has("\"one\" overlaps \"two\""), "{problems:?}");
    assert!(has("table") && has("wider than the page"), "{problems:?}");
}

#[test]
#[ignore = "needs chromium: ./test.sh installs it"]
fn every_page_lays_out_in_chromium_with_nothing_clipped_or_overlapping() {
    let tmp = TempDir::new().unwrap();
    let short = ["--events", "3000", "--interval", "0.05"];
    let a = run(&tmp, "a", &short);
    let b = run(
        &tmp,
        "b",
        &[&short[..], &["-w", "hot-reads", "-c", "4"]].concat(),
    );
    let c = run(&tmp, "c", &[&short[..], &["--db", "null://"]].concat());
    hatshop(tmp.path())
        .arg("compare")
        .args([&a, &b, &c])
        .args(["-o", "cmp"])
        .assert()
        .success();
    hatshop(tmp.path())
        .args([
            "sweep",
            "-w",
            "creates",
            "--vary",
            "concurrency=1,2,4",
            "--events",
            "600",
        ])
        .args(["--out", "sweep"])
        .assert()
        .success();
    hatshop(tmp.path())
        .args([
            "load",
            "--rows",
            "20000",
            "--batch-size",
            "2000",
            "--out",
            "load",
        ])
        .assert()
        .success();
    let repeated = run(&tmp, "repeated", &[&short[..], &["--repeat", "2"]].concat());
    let pages = [
        ("report", a.join("report.html")),
        ("compare", tmp.path().join("cmp/compare.html")),
        ("sweep", tmp.path().join("sweep/sweep.html")),
        ("load", tmp.path().join("load/report.html")),
        ("repeats", repeated.join("report.html")),
    ];
    let mut found = Vec::new();
    for (name, page) in &pages {
        // As wide as a laptop's browser, where nothing needs scrolling sideways, and
        // as narrow as half a screen, where a wide table may scroll on its own.
        for width in [1200, 700] {
            let profile = tmp.path().join(format!("profile-{name}-{width}"));
            let seen = layout(page, width, &profile);
            assert!(seen.charts > 0, "{name}: no chart measured");
            let at = |what: &String| format!("{name} at {width} px: {what}");
            found.extend(seen.problems.iter().map(at));
            if width >= 1200 {
                found.extend(seen.scrolls.iter().map(|s| at(&format!("scrolls {s}"))));
            }
        }
        let png = screenshot(page, name, &tmp.path().join(format!("profile-{name}-shot")));
        println!("{name}: {}", png.display());
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
#[ignore = "needs Java and HdrHistogram's jar: ./test.sh fetches it from Maven Central"]
fn latency_hlog_opens_in_hdrhistograms_own_log_processor() {
    let jar = std::env::var("HATSHOP_TEST_HDRHISTOGRAM_JAR")
        .expect("HATSHOP_TEST_HDRHISTOGRAM_JAR is not set: run ./test.sh");
    let tmp = TempDir::new().unwrap();
    // Open loop, so the log also holds the response-time histograms.
    let out = run(&tmp, "hlog", &["--events", "5000", "--rate", "20000"]);
    // A tagged response histogram reads back with the tool's -tag.
    let tagged = StdCommand::new("java")
        .args(["-cp", &jar, "org.HdrHistogram.HistogramLogProcessor", "-i"])
        .arg(out.join("latency.hlog"))
        .args(["-tag", "response-read_order", "-o"])
        .arg(tmp.path().join("response"))
        .output()
        .unwrap();
    assert!(tagged.status.success(), "{tagged:?}");
    let hgrm = std::fs::read_to_string(tmp.path().join("response.hgrm")).unwrap();
    let reads = json(&out.join("summary.json"))["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["event_type"] == "read_order")
        .unwrap()["ok"]
        .to_string();
    assert!(
        hgrm.lines()
            .filter_map(|l| l.split("Total count    =").nth(1))
            .any(|n| n.trim().trim_end_matches(']').trim() == reads),
        "{hgrm}"
    );
    // As the tool is usually run: no -tag, so it reads the untagged histograms.
    let output = StdCommand::new("java")
        .args(["-cp", &jar, "org.HdrHistogram.HistogramLogProcessor", "-i"])
        .arg(out.join("latency.hlog"))
        .arg("-o")
        .arg(tmp.path().join("processed"))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let hgrm = std::fs::read_to_string(tmp.path().join("processed.hgrm")).unwrap();
    let total: u64 = hgrm
        .lines()
        .find_map(|l| l.split("Total count    =").nth(1))
        .and_then(|n| n.trim().trim_end_matches(']').trim().parse().ok())
        .unwrap_or_else(|| panic!("no total count in {hgrm}"));
    let summary = json(&out.join("summary.json"));
    assert_eq!(total, summary["overall"]["ok"].as_u64().unwrap(), "{hgrm}");
    // Its maximum (ms, the tool's default unit for ns values) is ours, to 3 digits.
    let max_ms: f64 = hgrm
        .lines()
        .find_map(|l| l.strip_prefix("#[Max     ="))
        .and_then(|rest| rest.split(',').next())
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no max in {hgrm}"));
    let ours_ms = summary["overall"]["max_us"].as_f64().unwrap() / 1_000.0;
    assert!(
        (max_ms - ours_ms).abs() <= ours_ms * 0.002 + 0.001,
        "{max_ms} ms vs {ours_ms} ms"
    );
}

/// A run with nothing measured is no baseline: no ratio is made up against it.
#[test]
fn compare_against_a_run_that_measured_nothing_gives_no_ratio() {
    let tmp = TempDir::new().unwrap();
    let empty = run_ok(
        &tmp,
        "empty",
        &[
            "--events",
            "1000",
            "--warmup",
            "10000000",
            "--duration",
            "0.3",
        ],
    );
    assert_eq!(json(&empty.join("run.json"))["measured_ops"], 0);
    let full = run_ok(&tmp, "full", &["--events", "1000"]);
    let output = hatshop(tmp.path())
        .arg("compare")
        .arg(&empty)
        .arg(&full)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    let second = stdout
        .lines()
        .skip_while(|l| !l.starts_with("all "))
        .nth(1)
        .unwrap();
    assert!(
        second.contains("no successful operation in run #1"),
        "{stdout}"
    );
    assert!(!second.contains("1.00"), "{second}");
}

/// Runs are named by what they are (store, workload, then what a series varies), not by
/// the first settings that differ in name order; what names them is listed first and
/// the details fold away; a verdict's advice is said once, not in every row.
#[test]
fn compared_runs_are_named_by_what_they_are() {
    let tmp = TempDir::new().unwrap();
    let short = ["--events", "3000", "--interval", "10"];
    let a = run(&tmp, "a", &short);
    let b = run(&tmp, "b", &[&short[..], &["-w", "hot-reads"]].concat());
    let c = run(&tmp, "c", &[&short[..], &["--db", "null://"]].concat());
    let out = hatshop(tmp.path())
        .arg("compare")
        .args([&a, &b, &c])
        .args(["-o", "cmp"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let differs: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("what differs"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .collect();
    assert_eq!(differs[0], "  store: sqlite → sqlite → null", "{text}");
    assert_eq!(
        differs[1], "  workload.name: hatshop-random → hot-reads → hatshop-random",
        "{text}"
    );
    assert!(differs.last().unwrap().contains("details"), "{text}");
    assert!(!text.contains("busy_timeout_ms"), "{text}");
    // The advice for runs too short to test is said once, under the table.
    assert_eq!(
        text.matches("run longer or shorten --interval").count(),
        1,
        "{text}"
    );

    let page = std::fs::read_to_string(tmp.path().join("cmp/compare.html")).unwrap();
    for name in [
        "#1 sqlite · hatshop-random",
        "#2 sqlite · hot-reads",
        "#3 null · hatshop-random",
    ] {
        assert!(page.contains(name), "{name}");
    }
    let table = &page[page.find(r#"<table id="comparison""#).unwrap()..];
    let table = &table[..table.find("</table>").unwrap()];
    assert!(!table.contains("busy_timeout_ms"), "{table}");
    let (naming, details) = page.split_once(r#"<details id="details">"#).unwrap();
    assert!(naming.contains("<code>store: sqlite → sqlite → null</code>"));
    assert!(details.contains("<code>version: SQLite"), "{details}");
    assert_eq!(page.matches("run longer or shorten --interval").count(), 1);

    // The numbers of each figure beside the page, its series named as the runs are.
    let figure = tmp
        .path()
        .join("cmp/figures/compare-02-p99-latency-per-event-type.csv");
    assert!(page.contains(r#"href="figures/compare-02-p99-latency-per-event-type.csv""#));
    let mut bars = csv::Reader::from_path(&figure).unwrap();
    assert_eq!(
        bars.headers().unwrap(),
        vec!["series", "event type", "latency (µs)"]
    );
    let rows: Vec<csv::StringRecord> = bars.records().map(Result::unwrap).collect();
    let mut series: Vec<&str> = rows.iter().map(|r| &r[0]).collect();
    series.dedup();
    assert_eq!(
        series,
        [
            "#1 sqlite · hatshop-random",
            "#2 sqlite · hot-reads",
            "#3 null · hatshop-random"
        ]
    );
    assert!(rows.iter().all(|r| r[2].parse::<f64>().is_ok()), "{rows:?}");
}

/// A store inside hatshop (SQLite) sends nothing over the wire, so its report charts
/// no loopback traffic (which would be other processes'), while its memory is charted.
#[test]
fn an_embedded_stores_report_has_no_wire_chart() {
    let tmp = TempDir::new().unwrap();
    let out = run(
        &tmp,
        "embedded",
        &["--rate", "1000", "--duration", "2.5", "--interval", "1"],
    );
    let rows = common::csv_maps(&out.join("server-metrics.csv"));
    assert!(
        rows.iter().any(|r| r["source"] == "loopback"),
        "the host's loopback was sampled: {rows:?}"
    );
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("Resident memory over time"));
    assert!(!html.contains("Bytes on the wire"));
    // A run stopped by its --duration says how far its lanes got, beside what it hashed.
    let record = json(&out.join("run.json"));
    let applied = record["lane_last_seq"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(serde_json::Value::as_u64)
        .max()
        .unwrap()
        + 1;
    let said = format!(
        "its lanes had applied the stream up to event {}",
        hatshop::numbers::thousands(applied)
    );
    assert!(html.contains(&said), "{said}");
}
