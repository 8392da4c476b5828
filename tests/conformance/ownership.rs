//! A run drops only what hatshop made. Each store is given, in a place of the test's
//! own, something under hatshop's names that hatshop did not make (a table `orders`,
//! or a key), through the store's own driver: a run refuses to touch it in one line,
//! `--recreate` replaces it, and the next run, finding hatshop's marker, goes ahead
//! without asking.

use std::collections::BTreeMap;
use std::time::Duration;

use hatshop::db::{AnyStore, ConnectOptions, DbUrl, Settings, Store};
use hatshop::workload::KeyText;
use tempfile::TempDir;

use super::common::{OwnHome, assert_one_line_error, cassandra as cassandra_url, run_ok, url};
use super::drivers::{block_on, mysql_sql, postgres_sql};

/// The refusal, naming `theirs`; then `--recreate`; then a run without it.
fn only_what_hatshop_made_is_dropped(tmp: &TempDir, db: &str, theirs: &str) {
    assert_one_line_error(
        tmp.path(),
        &["run", "--db", db, "--events", "100"],
        &format!("refusing to drop {theirs} in "),
    );
    assert!(
        !tmp.path().join("results").exists(),
        "{db}: a run that never began left a folder"
    );
    run_ok(
        tmp,
        "recreate",
        &["--db", db, "--events", "100", "--recreate"],
    );
    run_ok(tmp, "again", &["--db", db, "--events", "100", "--verify"]);
}

#[test]
fn sqlite() {
    let tmp = TempDir::new().unwrap();
    let theirs = rusqlite::Connection::open(tmp.path().join("theirs.db")).unwrap();
    theirs
        .execute_batch("CREATE TABLE orders (id INT)")
        .unwrap();
    drop(theirs);
    only_what_hatshop_made_is_dropped(&tmp, "sqlite://theirs.db", "orders");
}

#[test]
#[ignore = "needs a live MariaDB: ./test.sh starts one"]
fn mysql() {
    let db = url("HATSHOP_TEST_MYSQL");
    mysql_sql(
        &db,
        "DROP DATABASE IF EXISTS conformance_theirs; CREATE DATABASE conformance_theirs; \
             CREATE TABLE conformance_theirs.orders (id INT)",
    );
    let theirs = db.replace("/hatshop", "/conformance_theirs");
    only_what_hatshop_made_is_dropped(&TempDir::new().unwrap(), &theirs, "orders");
}

#[test]
#[ignore = "needs a live PostgreSQL: ./test.sh starts one"]
fn postgres() {
    let db = url("HATSHOP_TEST_POSTGRES");
    let theirs = db.replace("/hatshop", "/conformance_theirs");
    postgres_sql(
        &db,
        "DROP DATABASE IF EXISTS conformance_theirs WITH (FORCE); \
         CREATE DATABASE conformance_theirs",
    );
    postgres_sql(&theirs, "CREATE TABLE orders (id INT)");
    only_what_hatshop_made_is_dropped(&TempDir::new().unwrap(), &theirs, "orders");
}

#[test]
#[ignore = "needs a live Cassandra: ./test.sh starts one"]
fn cassandra() {
    let theirs = cassandra_url("conformance_theirs");
    let hosts = theirs
        .trim_start_matches("cassandra://")
        .split('/')
        .next()
        .unwrap();
    block_on(async {
        let session = scylla::client::session_builder::SessionBuilder::new()
            .known_nodes(hosts.split(','))
            .build()
            .await
            .unwrap();
        for cql in [
            "DROP KEYSPACE IF EXISTS conformance_theirs",
            "CREATE KEYSPACE conformance_theirs WITH replication = \
             {'class': 'SimpleStrategy', 'replication_factor': 1}",
            "CREATE TABLE conformance_theirs.orders (id int PRIMARY KEY)",
        ] {
            session.query_unpaged(cql, ()).await.unwrap();
        }
    });
    // Cassandra's tables live in a keyspace, which hatshop drops whole.
    only_what_hatshop_made_is_dropped(
        &TempDir::new().unwrap(),
        &theirs,
        "keyspace conformance_theirs",
    );
}

#[test]
#[ignore = "needs a live Redis: ./test.sh starts one"]
fn redis() {
    // A database number no other test uses.
    let db = url("HATSHOP_TEST_REDIS");
    let theirs = format!("{}/9", db.rsplit_once('/').unwrap().0);
    block_on(async {
        let client = redis::Client::open(theirs.as_str()).unwrap();
        let mut conn = client.get_multiplexed_async_connection().await.unwrap();
        let _: () = redis::cmd("FLUSHDB").query_async(&mut conn).await.unwrap();
        let _: () = redis::cmd("SET")
            .arg("hatshop:theirs")
            .arg("x")
            .query_async(&mut conn)
            .await
            .unwrap();
    });
    only_what_hatshop_made_is_dropped(&TempDir::new().unwrap(), &theirs, "1 keys under hatshop:");
}

/// Voldemort's store is named by the server's configuration, so the test starts a
/// server of its own, whose store is empty, and writes a record into it with
/// hatshop's own client, without the setup that leaves the marker.
#[test]
#[ignore = "needs Voldemort built from source: ./test.sh builds it"]
fn voldemort() {
    let (_home, theirs) = OwnHome::with_server(&["voldemort"]);
    block_on(async {
        let url = DbUrl::parse(&theirs).unwrap();
        let meta = url.store();
        let options = ConnectOptions {
            concurrency: 1,
            settings: Settings::checked(meta.scheme, meta.settings, BTreeMap::new()).unwrap(),
            connect_timeout: Duration::from_secs(10),
            op_timeout: Duration::from_secs(10),
            existing_only: false,
            key_value_only: true,
        };
        let store = AnyStore::connect(&url, &options).await.unwrap();
        store.kv_write(&KeyText::of(1), b"theirs").await.unwrap();
        store.close().await;
    });
    only_what_hatshop_made_is_dropped(
        &TempDir::new().unwrap(),
        &theirs,
        "the keys of store hatshop",
    );
}
