//! Who may log in. On each store whose server checks a login, a user of the test's own
//! runs with the right password, and the wrong one ends the run in one line that holds
//! neither password. A store that checks no login (SQLite, `null://`, Voldemort)
//! refuses a URL that carries one, rather than drop it unsaid.

use std::time::{Duration, Instant};

use tempfile::TempDir;

use super::common::{
    OwnHome, assert_one_line_error, assert_ran_on_the_asked_wire, each_client_stack, run_ok, url,
};
use super::drivers::{block_on, mysql_sql, postgres_sql};

const RIGHT: &str = "Right-pass-1";
const WRONG: &str = "Wrong-pass-2";

/// Runs as `user` with the right password (of orders, and of key-value records over
/// each client stack the store has), then one with the wrong password.
fn only_the_right_password_runs(right: &str, expected: &str) {
    let tmp = TempDir::new().unwrap();
    run_ok(&tmp, "right", &["--db", right, "--events", "100"]);
    let kv = ["-w", "kv-50w-50r", "--records", "50", "--events", "100"];
    for (i, db) in each_client_stack(right).iter().enumerate() {
        let out = run_ok(
            &tmp,
            &format!("right-kv-{i}"),
            &[&["--db", db][..], &kv].concat(),
        );
        assert_ran_on_the_asked_wire(&out, db);
    }
    let wrong = right.replace(RIGHT, WRONG);
    let stderr = assert_one_line_error(
        tmp.path(),
        &["run", "--db", &wrong, "--events", "100"],
        expected,
    );
    assert!(
        !stderr.contains(RIGHT) && !stderr.contains(WRONG),
        "a password leaked: {stderr}"
    );
}

/// `user:password@` put into a suite server's URL, and its database renamed.
fn with_login(db: &str, user: &str, database: &str) -> String {
    let (scheme, rest) = db.split_once("://").unwrap();
    let after_user = rest.split_once('@').map_or(rest, |(_, hosts)| hosts);
    let hosts = after_user.split('/').next().unwrap();
    format!("{scheme}://{user}:{RIGHT}@{hosts}/{database}")
}

#[test]
fn a_store_that_checks_no_login_refuses_a_password() {
    let tmp = TempDir::new().unwrap();
    let mut tried = 0;
    for store in hatshop::db::STORES.iter().filter(|s| !s.login) {
        let joiner = if store.example.contains('?') {
            '&'
        } else {
            '?'
        };
        let db = format!("{}{joiner}password={WRONG}", store.example);
        let stderr = assert_one_line_error(
            tmp.path(),
            &["run", "--db", &db],
            &format!("{}:// takes no user or password", store.scheme),
        );
        assert!(!stderr.contains(WRONG), "a password leaked: {stderr}");
        tried += 1;
    }
    assert!(tried >= 3, "only {tried} stores check no login");
}

#[test]
#[ignore = "needs a live MariaDB: ./test.sh starts one"]
fn mysql() {
    let db = url("HATSHOP_TEST_MYSQL");
    mysql_sql(
        &db,
        &format!(
            "CREATE DATABASE IF NOT EXISTS conformance_login; \
             DROP USER IF EXISTS 'conformance'@'127.%'; \
             CREATE USER 'conformance'@'127.%' IDENTIFIED BY '{RIGHT}'; \
             GRANT ALL PRIVILEGES ON conformance_login.* TO 'conformance'@'127.%'"
        ),
    );
    only_the_right_password_runs(
        &with_login(&db, "conformance", "conformance_login"),
        "Access denied",
    );
}

/// The suite's PostgreSQL trusts every login on loopback; a line ahead of that asks
/// the test's own user for its password.
#[test]
#[ignore = "needs a live PostgreSQL: ./test.sh starts one"]
fn postgres() {
    let db = url("HATSHOP_TEST_POSTGRES");
    let rule = "host all conformance 127.0.0.1/32 scram-sha-256";
    block_on(async {
        let (client, connection) = tokio_postgres::connect(&db, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        let hba: String = client.query_one("SHOW hba_file", &[]).await.unwrap().get(0);
        let rules = std::fs::read_to_string(&hba).unwrap();
        if !rules.contains(rule) {
            std::fs::write(&hba, format!("{rule}\n{rules}")).unwrap();
        }
        client
            .query_one("SELECT pg_reload_conf()", &[])
            .await
            .unwrap();
    });
    postgres_sql(
        &db,
        &format!(
            "DROP DATABASE IF EXISTS conformance_login WITH (FORCE); \
             DROP ROLE IF EXISTS conformance; \
             CREATE ROLE conformance LOGIN PASSWORD '{RIGHT}'; \
             CREATE DATABASE conformance_login OWNER conformance"
        ),
    );
    let right = with_login(&db, "conformance", "conformance_login");
    wait_until_refused(&right.replace(RIGHT, WRONG));
    only_the_right_password_runs(&right, "password authentication failed");
    a_service_logs_in(&db);
}

/// The same login from libpq's connection service file: the URL names the host and
/// the service, the file the user, password and database.
fn a_service_logs_in(db: &str) {
    let tmp = TempDir::new().unwrap();
    let file = tmp.path().join("pg_service.conf");
    std::fs::write(
        &file,
        format!("[login_test]\nuser=conformance\npassword={RIGHT}\ndbname=conformance_login\n"),
    )
    .unwrap();
    let hosts = db.split_once('@').unwrap().1.split('/').next().unwrap();
    let out = tmp.path().join("service");
    let output = super::common::hatshop(tmp.path())
        .env("PGSERVICEFILE", &file)
        .args(["run", "--quiet", "--events", "100", "--out"])
        .arg(&out)
        .args(["--db", &format!("postgres://{hosts}?service=login_test")])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{said}");
    assert!(!said.contains(RIGHT), "a password leaked: {said}");
    let run = std::fs::read_to_string(out.join("run.json")).unwrap();
    assert!(!run.contains(RIGHT), "a password leaked into run.json");
    assert!(
        run.contains("service login_test in "),
        "where the password came from"
    );
}

/// Waits (at most 10 s) until the server has read its new rules: a wrong password is
/// then refused.
fn wait_until_refused(wrong: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while block_on(tokio_postgres::connect(wrong, tokio_postgres::NoTls)).is_ok() {
        assert!(
            Instant::now() < deadline,
            "PostgreSQL still trusts every login"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
#[ignore = "needs a live Redis: ./test.sh starts one"]
fn redis() {
    let db = url("HATSHOP_TEST_REDIS");
    block_on(async {
        let client = redis::Client::open(db.as_str()).unwrap();
        let mut conn = client.get_multiplexed_async_connection().await.unwrap();
        let _: () = redis::cmd("ACL")
            .arg(&["SETUSER", "conformance", "reset", "on"][..])
            .arg(format!(">{RIGHT}"))
            .arg(&["~*", "&*", "+@all"][..])
            .query_async(&mut conn)
            .await
            .unwrap();
    });
    // A database number no other test uses.
    only_the_right_password_runs(&with_login(&db, "conformance", "8"), "WRONGPASS");
}

/// Cassandra checks logins only when told to: the test starts one of its own with
/// PasswordAuthenticator; its first user, `cassandra`, makes the test's own.
#[test]
#[ignore = "needs Cassandra's jars: ./test.sh fetches them"]
fn cassandra() {
    let (_home, db) =
        OwnHome::with_server(&["cassandra", "--set", "authenticator=PasswordAuthenticator"]);
    let right = with_login(&db, "conformance", "conformance_login");
    let hosts = right
        .rsplit_once('@')
        .unwrap()
        .1
        .split('/')
        .next()
        .unwrap()
        .to_string();
    block_on(async {
        // The first user is made a few seconds after the server opens its port.
        let deadline = Instant::now() + Duration::from_secs(60);
        let session = loop {
            let built = scylla::client::session_builder::SessionBuilder::new()
                .known_node(&hosts)
                .user("cassandra", "cassandra")
                .build()
                .await;
            match built {
                Ok(session) => break session,
                Err(e) => assert!(Instant::now() < deadline, "{e}"),
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        };
        session
            .query_unpaged(
                format!(
                    "CREATE ROLE conformance WITH PASSWORD = '{RIGHT}' \
                     AND LOGIN = true AND SUPERUSER = true"
                ),
                (),
            )
            .await
            .unwrap();
    });
    only_the_right_password_runs(&right, "password are incorrect");
}
