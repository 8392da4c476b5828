//! `run --metrics`: a real Prometheus (Debian's) scrapes a run with the scrape settings
//! of deploy/prometheus/by-hand.yml, and its HTTP API answers with what the run did.

use crate::common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{hatshop, json, text};
use tempfile::TempDir;

/// A port nothing listens on now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The body of `GET path` on 127.0.0.1:port, or `None` if nothing answers 200.
fn get(port: u16, path: &str) -> Option<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n"
    )
    .ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    let (head, body) = response.split_once("\r\n\r\n")?;
    head.starts_with("HTTP/1.1 200").then(|| body.to_string())
}

/// Prometheus on `port`, scraping hatshop on `target_port` as deploy's settings say,
/// stopped when dropped.
struct Prometheus(Child);

impl Prometheus {
    fn start(dir: &Path, port: u16, target_port: u16) -> Prometheus {
        let settings = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/prometheus/by-hand.yml"),
        )
        .unwrap();
        assert!(settings.contains("127.0.0.1:9464"), "{settings}");
        let config = dir.join("prometheus.yml");
        std::fs::write(
            &config,
            settings.replace("127.0.0.1:9464", &format!("127.0.0.1:{target_port}")),
        )
        .unwrap();
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("prometheus is installed: ./test.sh installs Debian's package");
        let prometheus = Prometheus(child);
        let deadline = Instant::now() + Duration::from_secs(60);
        while get(port, "/-/ready").is_none() {
            assert!(Instant::now() < deadline, "Prometheus never became ready");
            std::thread::sleep(Duration::from_millis(200));
        }
        prometheus
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The one value of an instant query's vector, if it has one.
fn query(port: u16, promql: &str) -> Option<f64> {
    let encoded: String = promql
        .bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect();
    let body = get(port, &format!("/api/v1/query?query={encoded}"))?;
    let answer: serde_json::Value = serde_json::from_str(&body).ok()?;
    let result = answer["data"]["result"].as_array()?;
    result.first()?["value"][1].as_str()?.parse().ok()
}

#[test]
#[ignore = "needs Prometheus: ./test.sh installs Debian's package"]
fn prometheus_scrapes_a_run_and_answers_with_what_it_did() {
    let tmp = TempDir::new().unwrap();
    let (prometheus_port, metrics_port) = (free_port(), free_port());
    let _prometheus = Prometheus::start(tmp.path(), prometheus_port, metrics_port);
    let output = hatshop(tmp.path())
        .args([
            "run",
            "--quiet",
            "--db",
            "null://",
            "--rate",
            "1000",
            "--duration",
            "6s",
        ])
        .args([
            "--metrics",
            &format!("127.0.0.1:{metrics_port}"),
            "--tag",
            "watched run",
            "-o",
            "watched",
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let measured = json(&tmp.path().join("watched/run.json"))["measured_ops"]
        .as_u64()
        .unwrap() as f64;
    // The run is over and its endpoint gone: what was scraped, by series. The endpoint
    // stayed up after the run until Prometheus had read the totals: every operation.
    let scraped = |promql: &str| query(prometheus_port, promql);
    let counted = scraped(
        "sum(max_over_time(hatshop_operations_total{run_id=\"watched\",outcome=\"ok\"}[5m]))",
    )
    .expect("Prometheus holds the run's operations");
    assert_eq!(
        counted, measured,
        "Prometheus counted {counted} of {measured}"
    );
    for phase in ["measure", "done"] {
        assert_eq!(
            scraped(&format!(
                "max_over_time(hatshop_phase{{run_id=\"watched\",hatshop_phase=\"{phase}\"}}[5m])"
            )),
            Some(1.0),
            "Prometheus saw the phase {phase}"
        );
    }
    let p99 = scraped(
        "histogram_quantile(0.99, sum by (le) (max_over_time(hatshop_latency_seconds_bucket{run_id=\"watched\"}[5m])))",
    )
    .expect("Prometheus holds the run's latency");
    assert!(p99 > 0.0 && p99 <= 0.01, "p99 of null:// {p99} s");
    // Buckets from 1 µs resolve null://'s few microseconds; under --rate the response
    // time has a histogram of its own, never below the service time's.
    let p50 = scraped(
        "histogram_quantile(0.5, sum by (le) (max_over_time(hatshop_latency_seconds_bucket{run_id=\"watched\"}[5m])))",
    )
    .unwrap();
    assert!(p50 > 0.0 && p50 < 0.0001, "p50 of null:// {p50} s");
    let response_p99 = scraped(
        "histogram_quantile(0.99, sum by (le) (max_over_time(hatshop_response_seconds_bucket{run_id=\"watched\"}[5m])))",
    )
    .expect("Prometheus holds the run's response time");
    assert!(response_p99 >= p99 * 0.99, "{response_p99} < {p99}");
    // Every error series is there from the start, at 0 for a run that failed nothing.
    let error_series = scraped(
        "count(max_over_time(hatshop_operations_total{run_id=\"watched\",outcome=\"error\",event_type=\"read_order\"}[5m]))",
    );
    assert_eq!(error_series, Some(11.0), "one series per error kind");
    assert_eq!(
        scraped(
            "sum(max_over_time(hatshop_operations_total{run_id=\"watched\",outcome=\"error\"}[5m]))"
        ),
        Some(0.0)
    );
    // What ran, as an info metric.
    assert_eq!(
        scraped(
            "max_over_time(hatshop_run_info{run_id=\"watched\",workload=\"hatshop-random\",pace=\"open_loop\",tag=\"watched run\"}[5m])"
        ),
        Some(1.0)
    );
    assert_eq!(
        scraped("count(max_over_time(hatshop_in_flight{run_id=\"watched\",store=\"null\"}[5m]))"),
        Some(1.0)
    );
}

/// A bad address is a command-line error; a taken one, one line before any work (no
/// result folder is made).
#[test]
fn a_metrics_address_that_cannot_be_served_is_one_line() {
    let tmp = TempDir::new().unwrap();
    common::assert_one_line_error(
        tmp.path(),
        &["run", "--db", "null://", "--metrics", "nowhere"],
        "HOST:PORT",
    );
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    common::assert_one_line_error(
        tmp.path(),
        &["run", "--db", "null://", "--metrics", &addr, "-o", "never"],
        "cannot serve there",
    );
    assert!(!tmp.path().join("never").exists());
}

/// Port 0 asks the kernel for a free port: the run says which, even `--quiet`, and
/// run.json keeps it.
#[test]
fn a_metrics_port_of_0_is_named_where_it_was_given() {
    let tmp = TempDir::new().unwrap();
    let ran = hatshop(tmp.path())
        .args(["run", "--quiet", "--db", "null://", "--events", "2000"])
        .args([
            "--metrics",
            "127.0.0.1:0",
            "--metrics-linger",
            "0",
            "-o",
            "served",
        ])
        .output()
        .unwrap();
    let stderr = text(&ran.stderr);
    assert!(ran.status.success(), "{stderr}");
    let served = json(&tmp.path().join("served/run.json"))["metrics"]
        .as_str()
        .unwrap()
        .to_string();
    let port: u16 = served.strip_prefix("127.0.0.1:").unwrap().parse().unwrap();
    assert_ne!(port, 0);
    assert!(
        stderr.contains(&format!("metrics: http://{served}/metrics")),
        "{stderr}"
    );
}

/// Once the run is over the endpoint serves its final totals, every measured operation
/// counted and the phase `done`, until a scraper has read them; then the run exits,
/// well before `--metrics-linger` is up.
#[test]
fn the_endpoint_serves_the_totals_after_the_run_until_they_are_read() {
    use std::io::BufRead;
    let tmp = TempDir::new().unwrap();
    let mut run = common::spawn(
        tmp.path(),
        &[
            "run",
            "--quiet",
            "--db",
            "null://",
            "--events",
            "20000",
            "--metrics",
            "127.0.0.1:0",
            "--metrics-linger",
            "60s",
            "-o",
            "lingered",
        ],
    );
    let mut stderr = std::io::BufReader::new(run.stderr.take().unwrap());
    let mut line = String::new();
    let port: u16 = loop {
        line.clear();
        assert_ne!(stderr.read_line(&mut line).unwrap(), 0, "no metrics line");
        if let Some(rest) = line.trim().strip_prefix("metrics: http://127.0.0.1:") {
            break rest.strip_suffix("/metrics").unwrap().parse().unwrap();
        }
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    let body = loop {
        assert!(Instant::now() < deadline, "the run never ended");
        if let Some(body) = get(port, "/metrics")
            && body.contains("hatshop_phase=\"done\"} 1")
        {
            break body;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let read_at = Instant::now();
    let status = run.wait().unwrap();
    assert!(status.success());
    assert!(
        read_at.elapsed() < Duration::from_secs(20),
        "the run waited {:?} after its totals were read",
        read_at.elapsed()
    );
    let measured = json(&tmp.path().join("lingered/run.json"))["measured_ops"]
        .as_u64()
        .unwrap();
    let served: u64 = body
        .lines()
        .filter(|l| l.starts_with("hatshop_operations_total{") && l.contains("outcome=\"ok\""))
        .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(served, measured, "{body}");
    for phase in ["load", "warmup", "measure"] {
        assert!(
            body.contains(&format!("hatshop_phase=\"{phase}\"}} 0")),
            "{body}"
        );
    }
    assert!(body.contains("# TYPE hatshop_phase stateset"), "{body}");
}

/// A storm of scrapers held open and silent, more than the run may open files (a low
/// `ulimit -n`, hundreds of connections), waits in the listen queue past the endpoint's
/// cap: the run goes on writing its op log, ends well, and the endpoint answers again
/// once the storm has passed. Without the cap the run died opening its op log's next
/// part ("Too many open files").
#[test]
fn a_storm_of_scrapers_waits_past_the_cap_and_the_run_keeps_its_files() {
    use std::io::BufRead;
    use std::os::unix::process::CommandExt;
    let tmp = TempDir::new().unwrap();
    let mut command = Command::new(assert_cmd::cargo::cargo_bin("hatshop"));
    command
        .current_dir(tmp.path())
        .env_remove("HATSHOP_DB")
        .args(["run", "--quiet", "--db", "null://", "--rate", "200"])
        .args([
            "--duration",
            "30s",
            "--metrics",
            "127.0.0.1:0",
            "-o",
            "storm",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    // SAFETY: setrlimit is async-signal-safe and touches only the child.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 128,
                rlim_max: 128,
            };
            match libc::setrlimit(libc::RLIMIT_NOFILE, &limit) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
    let mut run = command.spawn().unwrap();
    let stderr = std::io::BufReader::new(run.stderr.take().unwrap());
    let (lines_tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            let _ = lines_tx.send(line);
        }
    });
    let port: u16 = loop {
        let line = lines
            .recv_timeout(Duration::from_secs(30))
            .expect("no metrics line");
        if let Some(rest) = line.trim().strip_prefix("metrics: http://127.0.0.1:") {
            break rest.strip_suffix("/metrics").unwrap().parse().unwrap();
        }
    };
    assert!(
        get(port, "/metrics").is_some(),
        "no answer before the storm"
    );
    // More connections than the run may open files, each kept open and silent.
    // Until the listen queue is full too.
    let storm: Vec<TcpStream> = (0..400)
        .map_while(|_| {
            let to = ([127, 0, 0, 1], port).into();
            TcpStream::connect_timeout(&to, Duration::from_millis(500)).ok()
        })
        .collect();
    assert!(storm.len() > 128, "only {} connections", storm.len());
    std::thread::sleep(Duration::from_secs(3));
    drop(storm);
    let said = |lines: &std::sync::mpsc::Receiver<String>, all: &mut Vec<String>| {
        all.extend(lines.try_iter());
    };
    let mut all = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while get(port, "/metrics").is_none() {
        said(&lines, &mut all);
        let exited = run.try_wait();
        assert!(
            Instant::now() < deadline && !matches!(exited, Ok(Some(_))),
            "no answer after the storm; the run: {exited:?}, said {all:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // The run ends at its duration, once a scraper has read its final totals.
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = run.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "the run did not end");
        let _ = get(port, "/metrics");
        std::thread::sleep(Duration::from_millis(200));
    };
    std::thread::sleep(Duration::from_millis(200));
    said(&lines, &mut all);
    assert!(status.success(), "{status:?}: {all:?}");
    assert!(
        !all.iter().any(|l| l.contains("Too many open files")),
        "{all:?}"
    );
    let run_json = json(&tmp.path().join("storm/run.json"));
    assert_eq!(run_json["status"], "stopped_at_deadline", "{run_json}");
}
