//! The same checks against the real PostgreSQL and Redis (MariaDB's are in
//! tests/mysql.rs, Cassandra's in tests/cassandra.rs), and the servers' lifecycle.
//!
//! These need live servers. `./test.sh` starts them with `hatshop server start …` and
//! passes their URLs in HATSHOP_TEST_POSTGRES and HATSHOP_TEST_REDIS; a test whose
//! variable is missing fails, it never skips. Tests on one database take its lock: they share its tables.

mod common;

use std::path::PathBuf;
use std::process::{Command as StdCommand, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use common::{
    OwnHome, SMALL_KV, assert_one_line_error, hatshop, json, key_value_presets, lock, logged_calls,
    op_rows, orders, run_and_verify, server, text, url,
};
use tempfile::TempDir;

static POSTGRES: Mutex<()> = Mutex::new(());
static REDIS: Mutex<()> = Mutex::new(());
/// Tests that start a server of their own in a home of their own take this lock: two
/// at once can be handed the same free port.
static OWN_SERVER: Mutex<()> = Mutex::new(());

#[test]
#[ignore = "needs a live PostgreSQL: ./test.sh starts one"]
fn postgres_verifies_under_concurrency_and_key_value_presets() {
    let _guard = lock(&POSTGRES);
    let tmp = TempDir::new().unwrap();
    let out = orders(
        &tmp,
        &url("HATSHOP_TEST_POSTGRES"),
        &["-c", "8", "--pool", "8"],
    );
    assert!(
        json(&out.join("run.json"))["database"]["store"]["server_version"]
            .as_str()
            .unwrap()
            .starts_with("PostgreSQL 15"),
    );
    key_value_presets(&url("HATSHOP_TEST_POSTGRES"), &[]);
}

/// Runs of key-value events alone go over hatshop's own wire where the server asks
/// for no password, verified exactly; runs with orders go through tokio-postgres.
#[test]
#[ignore = "needs a live PostgreSQL: ./test.sh starts one"]
fn postgres_key_value_runs_go_over_hatshops_own_wire() {
    let _guard = lock(&POSTGRES);
    let tmp = TempDir::new().unwrap();
    let db = url("HATSHOP_TEST_POSTGRES");
    let own = key_value_run(&tmp, &db, &[]);
    assert_eq!(kv_wire(&own), "own");
    // A connection per lane: no call waits for one, and the table tells of no queue.
    let shown = common::hatshop(tmp.path())
        .arg("show")
        .arg(&own)
        .output()
        .unwrap();
    let table = common::text(&shown.stdout);
    assert!(table.contains("latencies in µs"), "{table}");
    assert!(!table.contains("queue ("), "{table}");
    let orders = orders(&tmp, &db, &["-c", "4"]);
    assert_eq!(kv_wire(&orders), "tokio-postgres");
    // The driver, when asked.
    let driver = key_value_run(&tmp, &db, &["--kv-wire", "tokio-postgres"]);
    assert_eq!(kv_wire(&driver), "tokio-postgres");
}

/// A key-value run's load goes over hatshop's own wire as COPYs in binary form, and is
/// verified exact; a batch the server refuses (a second run of one shard meets the
/// first's keys) is named with the server's reason, and nothing is measured.
#[test]
#[ignore = "needs a live PostgreSQL: ./test.sh starts one"]
fn postgres_key_value_load_copies_over_the_own_wire_and_a_refused_batch_is_named() {
    let _guard = lock(&POSTGRES);
    let tmp = TempDir::new().unwrap();
    let db = url("HATSHOP_TEST_POSTGRES");
    let loaded = run_and_verify(
        &tmp,
        &db,
        &[
            "-w",
            "race-pg-select",
            "--records",
            "25000",
            "--events",
            "500",
        ],
    );
    assert_eq!(kv_wire(&loaded), "own");
    let load = &json(&loaded.join("run.json"))["unmeasured"]["load"];
    assert_eq!(load["rows"], 25000, "{load}");
    assert_eq!(load["batch"], 10000, "{load}");
    hatshop(tmp.path())
        .args(["prepare", "--db", &db])
        .assert()
        .success();
    let shard = [
        "run",
        "--quiet",
        "--db",
        &db,
        "-w",
        "race-pg-select",
        "--records",
        "4000",
        "--events",
        "200",
        "--shard",
        "0/2",
    ];
    let again = common::shard_run_twice(tmp.path(), &shard);
    assert_eq!(again.status.code(), Some(1));
    let stderr = text(&again.stderr);
    assert!(
        stderr.contains("the load's batch of")
            && stderr.contains("duplicate key value violates unique constraint"),
        "{stderr}"
    );
    assert_eq!(kv_wire(&tmp.path().join("again")), "own");
    assert_eq!(json(&tmp.path().join("again/run.json"))["measured_ops"], 0);
}

/// What the load wrote is vacuumed and analyzed before measuring, as `pgbench -i`
/// ends its load: the run says so in run.json, and the server's statistics show it.
#[test]
#[ignore = "needs a live PostgreSQL: ./test.sh starts one"]
fn postgres_vacuums_the_loaded_tables_before_measuring() {
    let _guard = lock(&POSTGRES);
    let tmp = TempDir::new().unwrap();
    let out = key_value_run(&tmp, &url("HATSHOP_TEST_POSTGRES"), &[]);
    let tidied = &json(&out.join("run.json"))["unmeasured"]["tidied"];
    assert_eq!(
        tidied["done"], "VACUUM (ANALYZE) orders, line_items, kv",
        "{tidied}"
    );
    assert!(tidied["took_s"].as_f64().unwrap() >= 0.0, "{tidied}");
    assert!(tidied.get("failed").is_none(), "{tidied}");
    // The run's setup made the table anew, so its statistics are this run's alone.
    let counts = postgres_rows(
        "SELECT vacuum_count, analyze_count FROM pg_stat_user_tables WHERE relname = 'kv'",
    );
    let counts: Vec<(i64, i64)> = counts.iter().map(|r| (r.get(0), r.get(1))).collect();
    assert_eq!(counts, [(1, 1)]);
}

/// A run whose load goes in first makes its tables bare and builds their keys once
/// the load is in, as `pgbench -i` does; the tables end as a keyed setup makes them,
/// and the load verifies exactly.
#[test]
#[ignore = "needs a live PostgreSQL: ./test.sh starts one"]
fn postgres_builds_the_loaded_tables_keys_after_the_load() {
    let _guard = lock(&POSTGRES);
    let tmp = TempDir::new().unwrap();
    let db = url("HATSHOP_TEST_POSTGRES");
    let constraints = || -> Vec<String> {
        postgres_rows(
            "SELECT conname::text || ' ' || contype::text FROM pg_constraint c \
             JOIN pg_class t ON t.oid = c.conrelid \
             WHERE t.relname IN ('orders', 'line_items', 'kv') ORDER BY 1",
        )
        .iter()
        .map(|r| r.get::<_, String>(0))
        .collect()
    };
    let keyed = [
        "kv_pkey p",
        "line_items_order_id_fkey f",
        "line_items_pkey p",
        "orders_pkey p",
    ];
    // No load: the keys come with the tables.
    run_and_verify(&tmp, &db, &["--orders", "0", "--events", "500"]);
    assert_eq!(constraints(), keyed);
    let out = run_and_verify(
        &tmp,
        &db,
        &["--orders", "3000", "--events", "500", "--load-batch", "200"],
    );
    assert_eq!(constraints(), keyed);
    let indexes: Vec<String> = postgres_rows(
        "SELECT indexname::text FROM pg_indexes WHERE tablename = 'line_items' ORDER BY 1",
    )
    .iter()
    .map(|r| r.get::<_, String>(0))
    .collect();
    assert_eq!(indexes, ["line_items_by_order", "line_items_pkey"]);
    assert_eq!(
        json(&out.join("run.json"))["unmeasured"]["load"]["rows"],
        3000
    );
}

/// `kv_table=pgbench_accounts`: records in pgbench's shape, over hatshop's own wire and,
/// in a run with orders, through tokio-postgres, verified exactly; a value longer than
/// pgbench's filler is refused before the run starts, in one line.
#[test]
#[ignore = "needs a live PostgreSQL: ./test.sh starts one"]
fn postgres_pgbench_shape_holds_the_records_and_refuses_longer_values() {
    let _guard = lock(&POSTGRES);
    let db = format!("{}?kv_table=pgbench_accounts", url("HATSHOP_TEST_POSTGRES"));
    key_value_presets(&db, &["--value-size", "84"]);
    let tmp = TempDir::new().unwrap();
    let spec = tmp.path().join("orders-and-records.toml");
    std::fs::write(
        &spec,
        "name = \"orders-and-records\"\nevents = 2000\ninitial_records = 300\nvalue_size = 84\n\
         [mix]\ncreate_order = 0.2\nwrite = 0.2\nrewrite = 0.2\nread = 0.3\ndelete = 0.1\n",
    )
    .unwrap();
    let both = run_and_verify(&tmp, &db, &["-w", spec.to_str().unwrap(), "-c", "4"]);
    let store = &json(&both.join("run.json"))["database"]["store"];
    assert_eq!(store["settings"]["kv_wire"], "tokio-postgres", "{store}");
    assert_eq!(store["settings"]["kv_table"], "pgbench_accounts", "{store}");
    let verify = json(&both.join("verify.json"));
    assert!(verify["keys_found"].as_u64().unwrap() >= 300, "{verify}");

    let columns: Vec<String> = postgres_rows(
        "SELECT column_name::text, data_type::text FROM information_schema.columns \
         WHERE table_name = 'kv' ORDER BY ordinal_position",
    )
    .iter()
    .map(|r| format!("{} {}", r.get::<_, String>(0), r.get::<_, String>(1)))
    .collect();
    assert_eq!(
        columns,
        [
            "aid integer",
            "bid integer",
            "abalance integer",
            "filler bytea"
        ]
    );

    assert_one_line_error(
        tmp.path(),
        &["run", "-w", "kv-50w-50r", "--events", "10", "--db", &db],
        "at most 84 bytes",
    );
}

/// The same on Redis: runs of key-value events alone, unpipelined, over hatshop's own
/// wire; pipelined ones and orders through the `redis` crate.
#[test]
#[ignore = "needs a live Redis: ./test.sh starts one"]
fn redis_key_value_runs_go_over_hatshops_own_wire() {
    let _guard = lock(&REDIS);
    let tmp = TempDir::new().unwrap();
    let db = url("HATSHOP_TEST_REDIS");
    assert_eq!(kv_wire(&key_value_run(&tmp, &db, &[])), "own");
    let pipelined = key_value_run(&tmp, &db, &["--pipeline", "4"]);
    assert_eq!(kv_wire(&pipelined), "redis-rs");
    let orders = orders(&tmp, &db, &["-c", "4"]);
    assert_eq!(kv_wire(&orders), "redis-rs");
    let driver = key_value_run(&tmp, &db, &["--kv-wire", "redis-rs"]);
    assert_eq!(kv_wire(&driver), "redis-rs");
}

/// The rows `sql` reads from the suite's PostgreSQL, asked the server directly.
fn postgres_rows(sql: &str) -> Vec<tokio_postgres::Row> {
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let (client, connection) =
            tokio_postgres::connect(&url("HATSHOP_TEST_POSTGRES"), tokio_postgres::NoTls)
                .await
                .unwrap();
        tokio::spawn(connection);
        client.query(sql, &[]).await.unwrap()
    })
}

/// A verified run of writes, rewrites and reads on 500 keys, 4 in flight.
fn key_value_run(tmp: &TempDir, db: &str, extra: &[&str]) -> PathBuf {
    let mut args = vec![
        "-w",
        "kv-10w-40rw-50r",
        "--records",
        "500",
        "--events",
        "3000",
        "-c",
        "4",
    ];
    args.extend_from_slice(extra);
    run_and_verify(tmp, db, &args)
}

/// What carried a run's key-value operations, as run.json says.
fn kv_wire(out: &std::path::Path) -> serde_json::Value {
    json(&out.join("run.json"))["database"]["store"]["settings"]["kv_wire"].clone()
}

#[test]
#[ignore = "needs a live Redis: ./test.sh starts one"]
fn redis_orders_and_key_value_presets_verify() {
    let _guard = lock(&REDIS);
    let tmp = TempDir::new().unwrap();
    let db = url("HATSHOP_TEST_REDIS");
    let out = orders(&tmp, &db, &["-c", "8"]);
    let store = &json(&out.join("run.json"))["database"]["store"];
    assert!(
        store["server_version"]
            .as_str()
            .unwrap()
            .starts_with("Redis "),
        "{store}"
    );
    assert_eq!(store["settings"]["persistence"], "none");
    key_value_presets(&db, &[]);
    key_value_presets(&db, &["--pipeline", "4"]);
}

#[test]
#[ignore = "needs mariadb-server and redis-server: ./test.sh installs them"]
fn server_lifecycle_start_status_restart_stop() {
    let _own = lock(&OWN_SERVER);
    let home = OwnHome(TempDir::new().unwrap());
    let home = home.0.path();
    for (kind, prefix) in [
        ("mariadb", "mysql://root@127.0.0.1:"),
        ("redis", "redis://127.0.0.1:"),
    ] {
        let started = server(home, &["start", kind]);
        assert!(started.status.success(), "{}", text(&started.stderr));
        let url = text(&started.stdout).trim().to_string();
        assert!(url.starts_with(prefix), "{url}");
        let again = server(home, &["start", kind]);
        assert!(again.status.success());
        assert!(
            text(&again.stderr).contains("already running"),
            "{}",
            text(&again.stderr)
        );
        assert_eq!(text(&again.stdout).trim(), url);
    }
    let status = text(&server(home, &["status"]).stdout);
    assert!(
        status.contains("mariadb") && status.contains("redis"),
        "{status}"
    );
    // A row per server says it runs (a table of its nodes follows).
    let running = status
        .lines()
        .filter(|l| l.split_whitespace().nth(1) == Some("running"))
        .count();
    assert_eq!(running, 2, "{status}");
    let nodes = common::status_nodes(&status);
    assert_eq!(nodes.iter().filter(|n| n[2] == "up").count(), 2, "{status}");
    // Each node says where its data is.
    let data = nodes
        .iter()
        .filter(|n| n.last().is_some_and(|d| d.starts_with('/')))
        .count();
    assert_eq!(data, 2, "{status}");
    let stopped = text(&server(home, &["stop", "--all"]).stdout);
    assert!(
        stopped.contains("mariadb: stopped") && stopped.contains("redis: stopped"),
        "{stopped}"
    );
    let status = text(&server(home, &["status"]).stdout);
    assert!(!status.contains("running"), "{status}");
}

/// The processes whose command line names `home`: servers started in it.
fn processes_of(home: &std::path::Path) -> Vec<String> {
    let home = home.to_str().unwrap();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| {
            let cmdline = std::fs::read(entry.ok()?.path().join("cmdline")).ok()?;
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            (cmdline.contains(home) && !cmdline.contains("hatshop")).then_some(cmdline)
        })
        .collect()
}

#[test]
#[ignore = "needs mariadb-server: ./test.sh installs it"]
fn a_start_that_fails_once_its_server_is_up_leaves_none_running() {
    let _own = lock(&OWN_SERVER);
    let home = OwnHome(TempDir::new().unwrap());
    let home = home.0.path();
    // A `mariadb` client that refuses: the server is up, and the start fails after it
    // (making its user), as a start does that meets a broken client install.
    let bin = home.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let client = bin.join("mariadb");
    std::fs::write(&client, "#!/bin/sh\necho refused >&2\nexit 1\n").unwrap();
    std::fs::set_permissions(&client, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let started = StdCommand::new(assert_cmd::cargo::cargo_bin("hatshop"))
        .args(["server", "start", "mariadb", "--home"])
        .arg(home)
        .env("PATH", path)
        .output()
        .unwrap();
    assert!(!started.status.success(), "{}", text(&started.stdout));
    assert!(
        text(&started.stderr).contains("refused"),
        "{}",
        text(&started.stderr)
    );
    let left = processes_of(home);
    assert!(left.is_empty(), "left running: {left:?}");
}

#[test]
#[ignore = "needs redis-server: ./test.sh installs it"]
fn redis_persistence_lands_in_run_json() {
    let _own = lock(&OWN_SERVER);
    let home = OwnHome(TempDir::new().unwrap());
    let started = server(
        home.0.path(),
        &["start", "redis", "--persistence", "aof-everysec"],
    );
    assert!(started.status.success(), "{}", text(&started.stderr));
    let url = text(&started.stdout).trim().to_string();
    let tmp = TempDir::new().unwrap();
    let out = run_and_verify(&tmp, &url, &[SMALL_KV, &["--events", "300"]].concat());
    assert_eq!(
        json(&out.join("run.json"))["database"]["store"]["settings"]["persistence"],
        "aof-everysec"
    );
    let status = text(&server(home.0.path(), &["status"]).stdout);
    assert!(status.contains("persistence=aof-everysec"), "{status}");
    // A server seconds old is cold, and the run that measured it says so.
    let cold = tmp.path().join("cold");
    let output = hatshop(tmp.path())
        .args(["run", "--db", &url, "--events", "300", "--home"])
        .arg(home.0.path())
        .args(SMALL_KV)
        .arg("-o")
        .arg(&cold)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let up = json(&cold.join("run.json"))["warmth"]["server_up_s"]
        .as_f64()
        .unwrap();
    assert!(up < 45.0, "{up}");
    let stdout = text(&output.stdout);
    assert!(
        stdout.contains(&format!("warning: the server had been up {up:.0} s")),
        "{stdout}"
    );
}

/// The quota of the group the kernel keeps process `pid` in (cgroup v1's cpu
/// controller, as this machine mounts it), in microseconds per 10 ms.
fn cpu_quota_of(pid: &str) -> Option<i64> {
    let groups = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    let path = groups
        .lines()
        .find_map(|l| l.split_once(":cpu:").map(|(_, p)| p.to_string()))
        .or_else(|| {
            groups
                .lines()
                .find_map(|l| l.split_once(":cpu,cpuacct:").map(|(_, p)| p.to_string()))
        })?;
    std::fs::read_to_string(format!("/sys/fs/cgroup/cpu{path}/cpu.cfs_quota_us"))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// The pid `server status` gives node 1.
fn node_pid(home: &std::path::Path) -> String {
    let status = text(&server(home, &["status"]).stdout);
    common::status_nodes(&status)
        .into_iter()
        .find(|n| n[0] == "1")
        .unwrap_or_else(|| panic!("no node 1 in {status}"))[3]
        .clone()
}

/// A node's budget: the kernel's CPU quota and memory limit on groups of its own, set
/// at start, changed live, kept when the node is started again, recorded in run.json,
/// gone with the node. The memory limit is the budget less what the node held before
/// it moved in.
#[test]
#[ignore = "needs redis-server and root (the kernel's CPU and memory controllers): ./test.sh runs it"]
fn a_node_keeps_its_budget_for_its_life() {
    let _own = lock(&OWN_SERVER);
    let home = OwnHome(TempDir::new().unwrap());
    let path = home.0.path();
    let started = server(path, &["start", "redis", "--cpu-per-node", "0.2"]);
    assert!(started.status.success(), "{}", text(&started.stderr));
    let url = text(&started.stdout).trim().to_string();
    let pid = node_pid(path);
    assert_eq!(cpu_quota_of(&pid), Some(2_000));
    let status = text(&server(path, &["status"]).stdout);
    assert!(
        status.contains("cpu_per_node=0.2") && status.contains("0.2 core"),
        "{status}"
    );
    // Changed on the running node, no restart.
    assert!(
        server(path, &["start", "redis", "--cpu-per-node", "0.5"])
            .status
            .success()
    );
    assert_eq!(node_pid(path), pid);
    assert_eq!(cpu_quota_of(&pid), Some(5_000));
    // A memory budget beside it, then changed: the CPU budget stays.
    for size in ["128M", "256M"] {
        let given = server(path, &["start", "redis", "--memory-per-node", size]);
        assert!(given.status.success(), "{}", text(&given.stderr));
    }
    let limit = memory_limit_of(&pid).expect("the node is in a memory group");
    // What redis held before the cap (a few MiB) is taken off the group's limit.
    assert!(limit < 256 << 20 && limit > 224 << 20, "limit {limit}");
    assert_eq!(cpu_quota_of(&pid), Some(5_000));
    let status = text(&server(path, &["status"]).stdout);
    assert!(
        status.contains("memory_per_node=256M") && status.contains("of 256 MiB memory"),
        "{status}"
    );
    // Killed and started again: the same budget on the new process.
    assert!(
        server(path, &["kill", "redis", "--node", "1"])
            .status
            .success()
    );
    assert!(
        server(path, &["start", "redis", "--node", "1"])
            .status
            .success()
    );
    let again = node_pid(path);
    assert_ne!(again, pid);
    assert_eq!(cpu_quota_of(&again), Some(5_000));
    let limit = memory_limit_of(&again).unwrap();
    assert!(limit < 256 << 20 && limit > 224 << 20, "limit {limit}");
    let tmp = TempDir::new().unwrap();
    let home_arg = ["--events", "300", "--home", path.to_str().unwrap()];
    let out = run_and_verify(&tmp, &url, &[SMALL_KV, &home_arg].concat());
    let settings = &json(&out.join("run.json"))["database"]["server"]["settings"];
    assert_eq!(settings["cpu_per_node"], "0.5");
    assert_eq!(settings["memory_per_node"], "256M");
    for (flag, value, says) in [
        ("--cpu-per-node", "99", "--cpu-per-node must be from 0.1 to"),
        (
            "--memory-per-node",
            "1M",
            "--memory-per-node must be from 64 MiB to",
        ),
        (
            "--memory-per-node",
            "lots",
            "--memory-per-node takes a size such as 768M",
        ),
    ] {
        common::assert_one_line_error(
            path,
            &[
                "server",
                "start",
                "redis",
                flag,
                value,
                "--home",
                path.to_str().unwrap(),
            ],
            says,
        );
    }
    assert!(server(path, &["stop", "redis"]).status.success());
    let groups: Vec<String> = std::fs::read_dir("/sys/fs/cgroup/cpu/hatshop")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    assert!(
        !groups.iter().any(|g| g.ends_with(&format!("pid{again}"))),
        "the stopped node's group is gone: {groups:?}"
    );
}

/// The memory limit of the group process `pid` is in under the memory controller.
fn memory_limit_of(pid: &str) -> Option<u64> {
    let groups = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    let path = groups
        .lines()
        .find_map(|l| l.split_once(":memory:").map(|(_, p)| p.to_string()))?;
    std::fs::read_to_string(format!("/sys/fs/cgroup/memory{path}/memory.limit_in_bytes"))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Starts a run in the background against `url`, waits until it measures, runs
/// `fault`, and returns the run's result folder after it ends.
fn run_through(tmp: &TempDir, url: &str, fault: impl FnOnce()) -> PathBuf {
    let out = tmp.path().join("run");
    let child = StdCommand::new(assert_cmd::cargo::cargo_bin("hatshop"))
        .current_dir(tmp.path())
        .args([
            "run",
            "--quiet",
            "--db",
            url,
            "--events",
            "400000",
            "--duration",
            "25",
            "-c",
            "4",
            "--op-timeout",
            "5",
            "--out",
        ])
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    common::wait_for_bytes(&common::op_journal(&out), 10_000);
    fault();
    let output = child.wait_with_output().unwrap();
    // Calls failed from the fault on: over 1 % of them, the run says so and exits 3.
    let summary = json(&out.join("summary.json"));
    let failed = summary["errors"].as_u64().unwrap() as f64;
    let over_bound = failed > summary["ops"].as_u64().unwrap() as f64 * 0.01;
    let stderr = text(&output.stderr);
    if over_bound {
        assert_eq!(output.status.code(), Some(3), "{stderr}");
        assert!(stderr.contains("more than --max-errors 1 %"), "{stderr}");
    } else {
        assert!(output.status.success(), "{stderr}");
    }
    out
}

#[test]
#[ignore = "needs mariadb-server installed: ./test.sh installs it"]
fn a_server_stopped_mid_run_ends_the_run_cleanly_with_every_operation_logged() {
    let _own = lock(&OWN_SERVER);
    let home = OwnHome(TempDir::new().unwrap());
    let started = server(home.0.path(), &["start", "mariadb"]);
    assert!(started.status.success(), "{}", text(&started.stderr));
    let url = text(&started.stdout).trim().to_string();
    let tmp = TempDir::new().unwrap();
    let out = run_through(&tmp, &url, || {
        let stopped = server(home.0.path(), &["stop", "mariadb"]);
        assert!(text(&stopped.stdout).contains("stopped"));
    });
    let run = json(&out.join("run.json"));
    let measured = run["measured_ops"].as_u64().unwrap();
    assert_eq!(op_rows(&out).len() as u64, logged_calls(&run));
    let summary = json(&out.join("summary.json"));
    assert_eq!(summary["ops"].as_u64().unwrap(), measured);
    // Calls on connections the stop cut (outcome unknown), then calls that found no
    // connection to be had (not sent).
    let kind = |kind: &str| {
        summary["overall"]["errors_by_kind"][kind]
            .as_u64()
            .unwrap_or(0)
    };
    assert!(kind("connection") + kind("unavailable") > 0, "{summary}");
    assert!(
        summary["errors"].as_u64().unwrap() < measured,
        "some succeeded before the stop"
    );
}

#[test]
#[ignore = "needs postgresql installed: ./test.sh installs it"]
fn postgres_reconnects_after_a_server_restart() {
    let _own = lock(&OWN_SERVER);
    let home = OwnHome(TempDir::new().unwrap());
    let started = server(home.0.path(), &["start", "postgres"]);
    assert!(started.status.success(), "{}", text(&started.stderr));
    let url = text(&started.stdout).trim().to_string();
    let port = url
        .rsplit_once(':')
        .unwrap()
        .1
        .split('/')
        .next()
        .unwrap()
        .to_string();
    let tmp = TempDir::new().unwrap();
    let out = run_through(&tmp, &url, || {
        server(home.0.path(), &["stop", "postgres"]);
        std::thread::sleep(Duration::from_millis(1500));
        let again = server(home.0.path(), &["start", "postgres", "--port", &port]);
        assert!(again.status.success(), "{}", text(&again.stderr));
    });
    let rows = op_rows(&out);
    let first_failure = rows
        .iter()
        .position(|r| !r.success)
        .expect("some ops failed");
    let recovered = rows[first_failure..].iter().filter(|r| r.success).count();
    assert!(
        recovered > 100,
        "only {recovered} successes after the restart"
    );
    // The run verifies: failed writes are known, and those with unknown outcomes are
    // not judged.
    let verify = hatshop(tmp.path())
        .arg("verify")
        .arg(&out)
        .output()
        .unwrap();
    assert!(verify.status.success(), "{}", text(&verify.stdout));
}

/// Setting up hatshop's keys has its own deadline (120 s), not `--op-timeout`, which
/// bounds the measured operations: a Redis whose writes are paused a while as the run
/// begins (`CLIENT PAUSE … WRITE`) holds up its set-up, and the run goes on.
#[test]
#[ignore = "needs a live Redis: ./test.sh starts one"]
fn redis_set_up_waits_out_a_pause_whatever_the_op_timeout() {
    let _guard = lock(&REDIS);
    let tmp = TempDir::new().unwrap();
    let db = url("HATSHOP_TEST_REDIS");
    // redis://[user@]host:port/n
    let authority = db.trim_start_matches("redis://").split('/').next().unwrap();
    let address = authority.rsplit_once('@').map_or(authority, |(_, at)| at);
    let (host, port) = address.rsplit_once(':').unwrap();
    let paused = StdCommand::new("redis-cli")
        .args(["-h", host, "-p", port, "CLIENT", "PAUSE", "1500", "WRITE"])
        .output()
        .unwrap();
    assert!(paused.status.success(), "{}", common::text(&paused.stderr));
    let began = std::time::Instant::now();
    let out = tmp.path().join("paused");
    let ran = common::hatshop(tmp.path())
        .args([
            "run",
            "--quiet",
            "--db",
            &db,
            "-w",
            "kv-50w-50r",
            "--records",
            "100",
        ])
        .args(["--events", "500", "--op-timeout", "50ms", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(ran.status.success(), "{}", common::text(&ran.stderr));
    assert!(
        began.elapsed() >= Duration::from_millis(1_000),
        "the pause was not met"
    );
    assert_eq!(json(&out.join("run.json"))["status"], "finished");
}

/// Redis pointed at another database's port says so in one line: PostgreSQL drops the
/// connection on a command it cannot read, MariaDB greets in its own protocol.
#[test]
#[ignore = "needs a live PostgreSQL and MariaDB: ./test.sh starts them"]
fn redis_pointed_at_another_databases_port_asks_whether_it_is_redis() {
    let tmp = TempDir::new().unwrap();
    for var in ["HATSHOP_TEST_POSTGRES", "HATSHOP_TEST_MYSQL"] {
        let url = common::url(var);
        let host_port = url
            .split_once('@')
            .map_or(url.as_str(), |(_, rest)| rest)
            .split('/')
            .next()
            .unwrap()
            .to_string();
        for workload in ["hatshop-random", "kv-50w-50r"] {
            let redis = format!("redis://{host_port}/0");
            common::assert_one_line_error(
                tmp.path(),
                &["run", "--db", &redis, "-w", workload, "--events", "10"],
                &format!("{host_port} "),
            );
            let line = common::assert_one_line_error(
                tmp.path(),
                &["run", "--db", &redis, "-w", workload, "--events", "10"],
                "is it a Redis server?",
            );
            assert!(line.len() < 400, "{line}");
        }
    }
}

#[test]
#[ignore = "needs redis-server: ./test.sh installs it"]
fn redis_url_with_a_lone_password_logs_in_as_the_default_user() {
    let _own = lock(&OWN_SERVER);
    let tmp = TempDir::new().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let password = "Lone-Pw-93";
    let mut server = StdCommand::new("redis-server")
        .args(["--bind", "127.0.0.1", "--port", &port.to_string()])
        .args([
            "--requirepass",
            password,
            "--save",
            "",
            "--appendonly",
            "no",
        ])
        .current_dir(tmp.path())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let up = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(50));
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    let ran = up.then(|| {
        hatshop(tmp.path())
            .args([
                "run",
                "--quiet",
                "-w",
                "kv-50w-50r",
                "--events",
                "200",
                "--verify",
            ])
            .args(["--db", &format!("redis://{password}@127.0.0.1:{port}/0")])
            .args(["-o", "lone"])
            .output()
            .unwrap()
    });
    let wrong = up.then(|| {
        common::assert_one_line_error(
            tmp.path(),
            &[
                "run",
                "--db",
                &format!("redis://Not-{password}@127.0.0.1:{port}/0"),
                "--events",
                "10",
            ],
            "redis://***@127.0.0.1",
        )
    });
    let _ = server.kill();
    let _ = server.wait();
    assert!(up, "redis-server did not start on {port}");
    let ran = ran.unwrap();
    assert!(ran.status.success(), "{}", text(&ran.stderr));
    let record = std::fs::read_to_string(tmp.path().join("lone/run.json")).unwrap();
    assert!(!record.contains(password), "the password is in run.json");
    assert!(!wrong.unwrap().contains(password));
}
