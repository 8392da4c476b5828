//! Databases as they really run: servers set up by hand as an admin would
//! (`tests/servers/secure.sh`: a CA of their own, TLS required, users that log in with
//! SCRAM-SHA-256, MD5, ed25519, mysql_native_password and a Redis ACL password).
//! Each store runs a race preset and the order workload over TLS, verified exactly,
//! with run.json saying hatshop's own client carried the key-value operations and
//! what TLS it spoke; the password comes from where each store's own tools keep it and
//! shows nowhere; a wrong CA, an expired certificate, one made out to another name,
//! and a server without TLS where TLS is required each end in one line that says so.

use std::path::{Path, PathBuf};

use tempfile::TempDir;

use super::common::garbling_proxy::GarblingProxy;
use super::common::{
    OwnHome, assert_one_line_error, assert_ran_on_the_asked_wire, each_client_stack, hatshop, json,
    lock, text, url,
};

/// A key-value run of a few thousand operations, half of them reads.
const KEY_VALUE: [&str; 6] = ["-w", "kv-50w-50r", "--records", "200", "--events", "2000"];

fn password() -> String {
    url("HATSHOP_TEST_SECURE_PASSWORD")
}

fn certs() -> PathBuf {
    PathBuf::from(url("HATSHOP_TEST_SECURE_CERTS"))
}

/// `run --verify` of `args` in `tmp` with `env`, as a user of the hand-set-up servers,
/// which must succeed and show their password nowhere; its folder.
fn run_verified(tmp: &Path, name: &str, args: &[&str], env: &[(&str, &str)]) -> PathBuf {
    let (out, stdout, stderr) = verified_run(tmp, name, args, env);
    assert_secret_kept(&out, &stdout, &stderr);
    out
}

/// `run --verify` of `args` in `tmp` with `env`, which must succeed: its folder and
/// what it printed.
fn verified_run(
    tmp: &Path,
    name: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> (PathBuf, Vec<u8>, Vec<u8>) {
    let out = tmp.join(name);
    let mut cmd = hatshop(tmp);
    cmd.args(["run", "--quiet", "--verify", "--out"])
        .arg(&out)
        .args(args);
    for (key, value) in env {
        cmd.env(key, value);
    }
    let output = cmd.output().unwrap();
    assert!(
        output.status.success(),
        "{args:?}: {}{}",
        text(&output.stdout),
        text(&output.stderr)
    );
    let verify = json(&out.join("verify.json"));
    assert_eq!(
        verify["first_differences"],
        serde_json::json!([]),
        "{verify}"
    );
    (out, output.stdout, output.stderr)
}

/// The password is in no byte of the folder, nor of what the command printed.
fn assert_secret_kept(folder: &Path, stdout: &[u8], stderr: &[u8]) {
    let secret = password();
    assert!(!text(stdout).contains(&secret) && !text(stderr).contains(&secret));
    for entry in walk(folder) {
        let bytes = std::fs::read(&entry).unwrap();
        let found = bytes.windows(secret.len()).any(|w| w == secret.as_bytes());
        assert!(!found, "the password is in {}", entry.display());
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// The store settings run.json records.
fn store_settings(folder: &Path) -> serde_json::Value {
    json(&folder.join("run.json"))["database"]["store"]["settings"].clone()
}

/// A key-value run over TLS under `mode` went over the wire `db` asked for; the own
/// wire (the default) also says which TLS it spoke.
fn assert_wire_over_tls(folder: &Path, db: &str, mode: &str) {
    assert_ran_on_the_asked_wire(folder, db);
    let settings = store_settings(folder);
    let tls = settings["tls"].as_str().unwrap();
    assert!(tls.contains(mode), "{tls}");
    if !db.contains("kv_wire=") {
        assert_eq!(settings["kv_wire"], "own", "{settings}");
        assert!(tls.starts_with("TLSv1."), "{tls}");
    }
}

#[test]
#[ignore = "needs the hand-set-up TLS servers: ./test.sh starts them"]
fn postgres_over_tls_with_scram_and_md5_logins() {
    let _guard = lock(&super::SECURE_POSTGRES);
    let tmp = TempDir::new().unwrap();
    let pw = password();
    let db = url("HATSHOP_TEST_SECURE_PG");
    // The race preset, as pgbench runs it: SCRAM, verify-full, PGPASSWORD.
    let race = run_verified(
        tmp.path(),
        "race",
        &[
            "--db",
            &db,
            "-w",
            "race-pg-select",
            "--kv-table",
            "pgbench_accounts",
            "--records",
            "2000",
            "--events",
            "5000",
            "--warmup",
            "0",
        ],
        &[("PGPASSWORD", &pw)],
    );
    assert_wire_over_tls(&race, &db, "sslmode=verify-full");
    assert_eq!(store_settings(&race)["password_from"], "PGPASSWORD");
    // Orders, through the driver over TLS, the password from a password file and the
    // TLS settings from libpq's variables.
    let pgpass = tmp.path().join("pgpass");
    std::fs::write(&pgpass, format!("127.0.0.1:*:hatshop:bench:{pw}\n")).unwrap();
    set_private(&pgpass);
    let bare = db.split('?').next().unwrap();
    let ca = certs().join("ca.pem");
    let orders = run_verified(
        tmp.path(),
        "orders",
        &["--db", bare, "--events", "2000"],
        &[
            ("PGPASSFILE", pgpass.to_str().unwrap()),
            ("PGSSLMODE", "verify-ca"),
            ("PGSSLROOTCERT", ca.to_str().unwrap()),
        ],
    );
    let settings = store_settings(&orders);
    assert_eq!(settings["kv_wire"], "tokio-postgres");
    assert!(
        settings["tls"]
            .as_str()
            .unwrap()
            .contains("PGSSLMODE=verify-ca"),
        "{settings}"
    );
    assert!(
        settings["password_from"]
            .as_str()
            .unwrap()
            .ends_with("pgpass line 1")
    );
    // MD5, over require, in its own database.
    let md5 = bare
        .replace("bench@", &format!("bench_md5:{pw}@"))
        .replace("/hatshop", "/hatshop_md5");
    for (i, db) in each_client_stack(&format!("{md5}?sslmode=require"))
        .iter()
        .enumerate()
    {
        let md5_run = run_verified(
            tmp.path(),
            &format!("md5-{i}"),
            &[&["--db", db][..], &KEY_VALUE].concat(),
            &[],
        );
        assert_wire_over_tls(&md5_run, db, "sslmode=require");
    }
}

fn set_private(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
}

#[test]
#[ignore = "needs the hand-set-up TLS servers: ./test.sh starts them"]
fn postgres_tls_that_cannot_be_had_is_one_line() {
    let tmp = TempDir::new().unwrap();
    let pw = password();
    let db = url("HATSHOP_TEST_SECURE_PG").replace("bench@", &format!("bench:{pw}@"));
    let other_ca = certs().join("other-ca.pem");
    let wrong_ca = db.replace("ca.pem", "other-ca.pem");
    let stderr = assert_one_line_error(
        tmp.path(),
        &["run", "--db", &wrong_ca, "--events", "10"],
        &format!(
            "the server's certificate is not signed by the CA in sslrootcert={}",
            other_ca.display()
        ),
    );
    assert!(!stderr.contains(&pw));
    // TLS required by the server, refused by the client.
    let plain = format!("{}?sslmode=disable", db.split('?').next().unwrap());
    assert_one_line_error(
        tmp.path(),
        &["run", "--db", &plain, "--events", "10"],
        "no encryption",
    );
    // TLS required by the client of a server without it (the suite's own).
    let suite = format!("{}?sslmode=require", url("HATSHOP_TEST_POSTGRES"));
    assert_one_line_error(
        tmp.path(),
        &["run", "--db", &suite, "-w", "kv-50w-50r", "--events", "10"],
        "does not speak TLS (it answered N to SSLRequest), and sslmode=require asks for it",
    );
}

#[test]
#[ignore = "needs the hand-set-up TLS servers: ./test.sh starts them"]
fn mysql_over_tls_with_ed25519_and_native_logins() {
    let _guard = lock(&super::SECURE_MYSQL);
    let tmp = TempDir::new().unwrap();
    let pw = password();
    let db = url("HATSHOP_TEST_SECURE_MYSQL").replace("bench_ed@", &format!("bench_ed:{pw}@"));
    let race = run_verified(
        tmp.path(),
        "race",
        &[
            "--db",
            &db,
            "-w",
            "race-sql-select",
            "--kv-table",
            "sbtest",
            "--records",
            "2000",
            "--events",
            "5000",
            "--warmup",
            "0",
        ],
        &[],
    );
    assert_wire_over_tls(&race, &db, "ssl-mode=VERIFY_IDENTITY");
    // Orders as the native user, the login and TLS from ~/.my.cnf's [client].
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let ca = certs().join("ca.pem");
    std::fs::write(
        home.join(".my.cnf"),
        format!(
            "[client]\nuser = bench_native\npassword = \"{pw}\"\nssl-mode = VERIFY_CA\nssl-ca = {}\n",
            ca.display()
        ),
    )
    .unwrap();
    set_private(&home.join(".my.cnf"));
    let bare = format!("mysql://{}/hatshop", super::garbled::first_host(&db));
    let orders = run_verified(
        tmp.path(),
        "orders",
        &["--db", &bare, "--events", "2000"],
        &[("HOME", home.to_str().unwrap())],
    );
    let settings = store_settings(&orders);
    assert_eq!(settings["kv_wire"], "mysql_async");
    assert!(
        settings["password_from"]
            .as_str()
            .unwrap()
            .ends_with(".my.cnf [client]")
    );
    assert!(
        settings["tls"].as_str().unwrap().contains("VERIFY_CA"),
        "{settings}"
    );
    // MYSQL_PWD, for a key-value run on the own wire as the native user.
    let native = format!(
        "mysql://bench_native@{}/hatshop?ssl-mode=REQUIRED",
        super::garbled::first_host(&db)
    );
    for (i, db) in each_client_stack(&native).iter().enumerate() {
        let kv = run_verified(
            tmp.path(),
            &format!("kv-{i}"),
            &[&["--db", db][..], &KEY_VALUE].concat(),
            &[("MYSQL_PWD", &pw), ("HOME", tmp.path().to_str().unwrap())],
        );
        assert_wire_over_tls(&kv, db, "ssl-mode=REQUIRED");
        assert_eq!(store_settings(&kv)["password_from"], "MYSQL_PWD");
    }
}

#[test]
#[ignore = "needs the hand-set-up TLS servers: ./test.sh starts them"]
fn mysql_tls_that_cannot_be_had_is_one_line() {
    let tmp = TempDir::new().unwrap();
    let pw = password();
    let db = url("HATSHOP_TEST_SECURE_MYSQL").replace("bench_ed@", &format!("bench_ed:{pw}@"));
    let stderr = assert_one_line_error(
        tmp.path(),
        &[
            "run",
            "--db",
            &db.replace("ca.pem", "other-ca.pem"),
            "--events",
            "10",
        ],
        "the server's certificate is not signed by the CA in ssl_ca=",
    );
    assert!(!stderr.contains(&pw));
    let suite = format!("{}?ssl-mode=REQUIRED", url("HATSHOP_TEST_MYSQL"));
    for workload in ["hatshop-random", "kv-50w-50r"] {
        assert_one_line_error(
            tmp.path(),
            &["run", "--db", &suite, "-w", workload, "--events", "10"],
            "does not speak TLS (its greeting offers no SSL), and ssl-mode=REQUIRED asks for it",
        );
    }
}

/// `ssl-mode=VERIFY_CA` checks the chain and not the name, as MySQL defines it. The
/// server is reached as 127.0.0.2 (through a forwarder), and its certificate is made
/// out to 127.0.0.1 and localhost. Under VERIFY_CA both of hatshop's MySQL clients
/// use it; under VERIFY_IDENTITY, or with a CA that did not sign it, it is refused.
#[test]
#[ignore = "needs the hand-set-up TLS servers: ./test.sh starts them"]
fn mysql_verify_ca_checks_the_chain_and_not_the_name() {
    // Its runs write the secure server's tables, as the other TLS test's do.
    let _guard = lock(&super::SECURE_MYSQL);
    let tmp = TempDir::new().unwrap();
    let pw = password();
    let secure = url("HATSHOP_TEST_SECURE_MYSQL");
    let forwarder = GarblingProxy::forwarder("127.0.0.2:0", super::garbled::first_host(&secure));
    let ca = certs().join("ca.pem");
    let db = |mode: &str, login: &str| {
        format!(
            "mysql://{login}@127.0.0.2:{}/hatshop?ssl-mode={mode}&ssl-ca={}",
            forwarder.port,
            ca.display()
        )
    };
    let pw_env = [("MYSQL_PWD", pw.as_str())];
    let orders = run_verified(
        tmp.path(),
        "orders",
        &["--db", &db("VERIFY_CA", "bench_ed"), "--events", "500"],
        &pw_env,
    );
    assert_eq!(store_settings(&orders)["kv_wire"], "mysql_async");
    for (i, db) in each_client_stack(&db("VERIFY_CA", "bench_ed"))
        .iter()
        .enumerate()
    {
        let kv = run_verified(
            tmp.path(),
            &format!("kv-{i}"),
            &[&["--db", db][..], &KEY_VALUE].concat(),
            &pw_env,
        );
        assert_wire_over_tls(&kv, db, "ssl-mode=VERIFY_CA");
    }
    let with_password = format!("bench_ed:{pw}");
    assert_one_line_error(
        tmp.path(),
        &[
            "run",
            "--db",
            &db("VERIFY_IDENTITY", &with_password),
            "--events",
            "10",
        ],
        "the server's certificate is made out to 127.0.0.1, localhost, not 127.0.0.2 \
         (ssl-mode=VERIFY_IDENTITY checks the name)",
    );
    assert_one_line_error(
        tmp.path(),
        &[
            "run",
            "--db",
            &db("VERIFY_CA", &with_password).replace("ca.pem", "other-ca.pem"),
            "--events",
            "10",
        ],
        "the server's certificate is not signed by the CA in ssl_ca=",
    );
}

#[test]
#[ignore = "needs the hand-set-up TLS servers: ./test.sh starts them"]
fn redis_over_tls_with_an_acl_user() {
    let _guard = lock(&super::SECURE_REDIS);
    let tmp = TempDir::new().unwrap();
    let pw = password();
    let db = url("HATSHOP_TEST_SECURE_REDIS");
    let race = run_verified(
        tmp.path(),
        "race",
        &[
            "--db",
            &db,
            "-w",
            "race-redis-get",
            "--records",
            "2000",
            "--events",
            "5000",
            "--warmup",
            "0",
        ],
        &[("REDISCLI_AUTH", &pw)],
    );
    assert_wire_over_tls(&race, &db, "rediss://");
    assert_eq!(store_settings(&race)["password_from"], "REDISCLI_AUTH");
    assert!(
        json(&race.join("run.json"))["database"]["url"]
            .as_str()
            .unwrap()
            .starts_with("rediss://")
    );
    let with_password = db.replace("bench@", &format!("bench:{pw}@"));
    // A client certificate the server's CA signed; and `insecure`, which checks nothing
    // (not even a CA that signed nothing of the server's).
    let certs = certs();
    let client = format!(
        "{with_password}&cert={}&key={}",
        certs.join("client.pem").display(),
        certs.join("client.key").display()
    );
    let insecure = format!(
        "{}&insecure=true",
        with_password.replace("ca.pem", "other-ca.pem")
    );
    for (name, db) in [("client-cert", client), ("insecure", insecure)] {
        for (i, db) in each_client_stack(&db).iter().enumerate() {
            let kv = run_verified(
                tmp.path(),
                &format!("{name}-{i}"),
                &[
                    "--db",
                    db,
                    "-w",
                    "kv-50w-50r",
                    "--records",
                    "100",
                    "--events",
                    "500",
                ],
                &[],
            );
            assert_ran_on_the_asked_wire(&kv, db);
        }
    }
    let orders = run_verified(
        tmp.path(),
        "orders",
        &["--db", &with_password, "--events", "2000"],
        &[],
    );
    let settings = store_settings(&orders);
    assert_eq!(settings["kv_wire"], "redis-rs");
    assert!(
        settings["tls"].as_str().unwrap().starts_with("TLSv1."),
        "{settings}"
    );
}

#[test]
#[ignore = "needs the hand-set-up TLS servers: ./test.sh starts them"]
fn redis_tls_that_cannot_be_had_is_one_line() {
    let tmp = TempDir::new().unwrap();
    let pw = password();
    let auth = |db: String| db.replace("bench@", &format!("bench:{pw}@"));
    let kv = ["-w", "kv-50w-50r", "--events", "10"];
    let cases = [
        (
            auth(url("HATSHOP_TEST_SECURE_REDIS_EXPIRED")),
            "the server's certificate expired at 2025-01-02 00:00:00 UTC",
        ),
        (
            auth(url("HATSHOP_TEST_SECURE_REDIS_OTHER_NAME")),
            "the server's certificate is made out to db.example.com, not 127.0.0.1 (rediss:// checks the name)",
        ),
        (
            auth(url("HATSHOP_TEST_SECURE_REDIS")).replace("ca.pem", "other-ca.pem"),
            "the server's certificate is not signed by the CA in cacert=",
        ),
        (
            // The suite's Redis has no TLS: it never answers a handshake.
            format!(
                "rediss{}",
                url("HATSHOP_TEST_REDIS").trim_start_matches("redis")
            ),
            "a port without TLS never answers its handshake",
        ),
    ];
    for (db, expected) in cases {
        let stderr = assert_one_line_error(
            tmp.path(),
            &[&["run", "--connect-timeout", "2", "--db", &db][..], &kv].concat(),
            expected,
        );
        assert!(!stderr.contains(&pw), "{stderr}");
    }
}

/// `hatshop server start KIND --tls`: the URL it prints reaches the server over TLS,
/// checking the certificate and its name against the CA made in the server's folder;
/// a run of key-value records and one of orders verify; the URL without TLS is refused
/// (MariaDB, with require_secure_transport, says "Access denied").
fn own_server_with_tls(kind: &str, plain_refused: &str) {
    let (_home, db) = OwnHome::with_server(&[kind, "--tls"]);
    let tmp = TempDir::new().unwrap();
    let (kv, _, _) = verified_run(
        tmp.path(),
        "kv",
        &[
            "--db",
            &db,
            "-w",
            "kv-50w-50r",
            "--records",
            "200",
            "--events",
            "2000",
        ],
        &[],
    );
    let settings = store_settings(&kv);
    let tls = settings["tls"].as_str().unwrap();
    assert!(tls.starts_with("TLSv1.3"), "{kind}: {settings}");
    if settings.get("kv_wire").is_some() {
        assert_eq!(settings["kv_wire"], "own", "{settings}");
    }
    verified_run(
        tmp.path(),
        "orders",
        &["--db", &db, "--events", "1000"],
        &[],
    );
    let plain = db
        .split('?')
        .next()
        .unwrap()
        .replace("rediss://", "redis://");
    let plain = match kind {
        "postgres" => format!("{plain}?sslmode=disable"),
        "mariadb" | "galera" => format!("{plain}?ssl-mode=DISABLED"),
        _ => plain,
    };
    assert_one_line_error(
        tmp.path(),
        &[
            "run",
            "--connect-timeout",
            "2",
            "--db",
            &plain,
            "--events",
            "10",
        ],
        plain_refused,
    );
}

#[test]
#[ignore = "needs postgresql installed: ./test.sh installs it"]
fn postgres_started_with_tls() {
    own_server_with_tls("postgres", "no encryption");
}

#[test]
#[ignore = "needs mariadb-server installed: ./test.sh installs it"]
fn mariadb_started_with_tls() {
    own_server_with_tls("mariadb", "Access denied");
}

#[test]
#[ignore = "needs galera-4 installed: ./test.sh installs it"]
fn galera_started_with_tls() {
    own_server_with_tls("galera", "Access denied");
}

#[test]
#[ignore = "needs redis-server installed: ./test.sh installs it"]
fn redis_started_with_tls() {
    own_server_with_tls("redis", "cannot connect");
}

#[test]
#[ignore = "needs Cassandra's jars: ./test.sh fetches them"]
fn cassandra_started_with_tls() {
    own_server_with_tls("cassandra", "cannot connect");
}

#[test]
fn voldemort_has_no_tls_and_says_so() {
    let home = TempDir::new().unwrap();
    let started = super::common::server(home.path(), &["start", "voldemort", "--tls"]);
    assert!(!started.status.success());
    let stderr = text(&started.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("Voldemort's protocol has no TLS"),
        "{stderr}"
    );
    assert_one_line_error(
        home.path(),
        &["run", "--db", "voldemort://127.0.0.1:6666/hatshop?ssl=true"],
        "ssl given to voldemort://: Voldemort's protocol has no TLS",
    );
}
