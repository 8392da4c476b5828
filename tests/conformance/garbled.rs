//! What a server sends is input too. Behind a proxy that spoils some of a real
//! server's answers once the run measures (a bit flipped, a stray CRLF in front), a run
//! of key-value events over hatshop's own wire ends within its deadlines, counts every
//! failed operation by kind, leaves its folder whole, and never panics.
//!
//! Voldemort's own wire is held to the same in its unit tests, against a node of the
//! test's own: its client routes to the addresses its cluster's metadata names, which
//! a proxy in front of the node it first asks cannot take over.

use std::time::{Duration, Instant};

use tempfile::TempDir;

use super::common::garbling_proxy::{GarblingProxy, Spoil};
use super::common::{
    each_client_stack, json, lock, logged_calls, op_journal, op_rows, spawn, text, url,
    wait_for_bytes,
};

/// The first `host:port` of a server URL.
pub(super) fn first_host(db: &str) -> &str {
    let rest = db.split_once("://").unwrap().1;
    let hosts = rest.rsplit_once('@').map_or(rest, |(_, hosts)| hosts);
    hosts.split(['/', '?', ',']).next().unwrap()
}

fn a_run_behind_a_garbling_proxy_ends_whole(db: &str, spoil: Spoil) {
    let upstream = first_host(db).to_string();
    let proxy = GarblingProxy::start(&upstream, 7, spoil);
    let proxied = db.replacen(&upstream, &format!("127.0.0.1:{}", proxy.port), 1);
    let tmp = TempDir::new().unwrap();
    let out = tmp.path().join("run");
    let mut child = spawn(
        tmp.path(),
        &[
            "run",
            "--quiet",
            "--db",
            &proxied,
            "-w",
            "kv-50w-50r",
            "--records",
            "200",
            "--warmup",
            "0",
            "--duration",
            "4s",
            "-c",
            "4",
            "--op-timeout",
            "2",
            "--connect-timeout",
            "2",
            "--max-errors",
            "100%",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    wait_for_bytes(&op_journal(&out), 2_000);
    proxy.arm();
    let armed = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if armed.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("{db} {spoil:?}: the run went on for a minute behind the proxy");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(!stderr.contains("panicked"), "{db} {spoil:?}: {stderr}");
    assert_eq!(status.code(), Some(0), "{db} {spoil:?}: {stderr}");
    // The measured four seconds, and the deadline of a call in flight at their end.
    assert!(
        armed.elapsed() < Duration::from_secs(15),
        "{:?}",
        armed.elapsed()
    );
    let run = json(&out.join("run.json"));
    assert_eq!(
        op_rows(&out).len() as u64,
        logged_calls(&run),
        "{db} {spoil:?}"
    );
    let summary = json(&out.join("summary.json"));
    let errors = summary["overall"]["errors"].as_u64().unwrap();
    let by_kind: u64 = summary["overall"]["errors_by_kind"]
        .as_object()
        .unwrap()
        .values()
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert_eq!(errors, by_kind, "{summary}");
    assert!(
        proxy.spoiled() > 0 && errors > 0,
        "{} spoiled, {errors} errors",
        proxy.spoiled()
    );
    assert!(
        out.join("report.html").is_file(),
        "{}",
        text(stderr.as_bytes())
    );
}

#[test]
#[ignore = "needs a live MariaDB: ./test.sh starts one"]
fn mysql_answers_garbled_end_the_run_whole() {
    let _guard = lock(&super::MYSQL);
    for db in each_client_stack(&url("HATSHOP_TEST_MYSQL")) {
        a_run_behind_a_garbling_proxy_ends_whole(&db, Spoil::FlipBit);
    }
}

#[test]
#[ignore = "needs a live PostgreSQL: ./test.sh starts one"]
fn postgres_answers_garbled_end_the_run_whole() {
    let _guard = lock(&super::POSTGRES);
    for db in each_client_stack(&url("HATSHOP_TEST_POSTGRES")) {
        a_run_behind_a_garbling_proxy_ends_whole(&db, Spoil::FlipBit);
    }
}

#[test]
#[ignore = "needs a live Redis: ./test.sh starts one"]
fn redis_answers_garbled_end_the_run_whole() {
    let _guard = lock(&super::REDIS);
    for db in each_client_stack(&url("HATSHOP_TEST_REDIS")) {
        a_run_behind_a_garbling_proxy_ends_whole(&db, Spoil::FlipBit);
        a_run_behind_a_garbling_proxy_ends_whole(&db, Spoil::CrlfFirst);
    }
}
