//! What a store declares about itself, as one value ([`StoreDeclarations`]), and what
//! the one list of stores (in `db/mod.rs`) makes of them: [`STORES`] and [`AnyStore`].
//! The compiler refuses a line whose type does not implement both `Store` and
//! `DeclaredStore` (its declarations and `connect`).

use super::{DbError, DbTime, STORES, Setting, Settings};

/// What a store is, as one value: its names, settings and defaults, and what it can
/// do. Each store declares one (`DeclaredStore::DECLARED`), built on
/// [`StoreDeclarations::new`] from what every store must say; the CLI, help and config
/// read it.
pub struct StoreDeclarations {
    /// The URL scheme, and the store's one name everywhere.
    pub scheme: &'static str,
    /// Other schemes that mean this store (accepted in URLs, never shown).
    pub aliases: &'static [&'static str],
    /// The scheme that means this store over TLS (`rediss`), read as the store's `tls`
    /// switch set, and shown again where that switch is on.
    pub tls_scheme: Option<&'static str>,
    /// Why the store cannot speak TLS, where it cannot: said when a TLS setting is
    /// given to it.
    pub no_tls: Option<&'static str>,
    /// What it talks to, for help.
    pub about: &'static str,
    /// A URL to copy, for help.
    pub example: &'static str,
    /// The settings it takes (URL `?key=value` or flags), with defaults and help.
    pub settings: &'static [Setting],
    /// The database runs inside hatshop's process (SQLite), so its work is hatshop's CPU.
    pub in_process: bool,
    /// Its server checks a user and password; a URL of a store that checks none is
    /// refused when it carries them, so that a password is never sent nowhere.
    pub login: bool,
    /// Some of its clients read a URL's lone user-info word (`scheme://WORD@host`) as
    /// the password: hatshop masks that word wherever it shows the URL.
    pub lone_user_is_password: bool,
    /// An embedded store's file: made under this name in the result folder when the URL
    /// names none (and then private to the run, so shards and `prepare` need a path).
    pub own_file: Option<&'static str>,
    /// The location that names a database kept in memory, gone with the process (that
    /// only a run itself can verify).
    pub in_memory: Option<&'static str>,
    /// False for a store that keeps nothing (null://): its reads are not checked and
    /// its runs not verified.
    pub holds_data: bool,
    /// Where `--trace-sample` reads the database's own time; `None`: this store cannot
    /// (its [`crate::db::DbTiming`] methods do the reading).
    pub db_time: Option<DbTime>,
    /// How `hatshop load --trace-sample` traces single batches on the server, if it can
    /// (for messages: "Cassandra (CQL tracing)").
    pub traces_batches: Option<&'static str>,
    /// Lanes to run when neither the spec nor `--concurrency` says.
    pub default_concurrency: fn(&Settings) -> usize,
    /// Rows of an initial load's batch when `--load-batch` does not say: where the
    /// store's bulk path gains little past it (bench/NOTES.md).
    pub initial_load_batch: usize,
    /// The runtime threads that cost least per operation with this many operations in
    /// flight, where that was measured (bench/NOTES.md); `None`: one per core. `run`
    /// uses it unless `--client-threads` is given.
    pub client_threads: fn(usize) -> Option<usize>,
    /// Rules between settings (checked before anything connects).
    pub check: fn(&Settings) -> Result<(), DbError>,
    /// Whether the store, so set, holds values of this many bytes (checked before a
    /// generated workload runs; a store with a fixed column says its limit).
    pub check_value_size: fn(&Settings, usize) -> Result<(), DbError>,
}

impl StoreDeclarations {
    /// What every store must say; the rest as most stores are: no other names, no TLS
    /// scheme, a server elsewhere with no login, data kept, no server-side timing, a
    /// runtime thread per core, no rules between settings, values of any size.
    pub const fn new(
        scheme: &'static str,
        about: &'static str,
        example: &'static str,
        settings: &'static [Setting],
        default_concurrency: fn(&Settings) -> usize,
    ) -> StoreDeclarations {
        StoreDeclarations {
            scheme,
            aliases: &[],
            tls_scheme: None,
            no_tls: None,
            about,
            example,
            settings,
            in_process: false,
            login: false,
            lone_user_is_password: false,
            own_file: None,
            in_memory: None,
            holds_data: true,
            db_time: None,
            traces_batches: None,
            default_concurrency,
            initial_load_batch: super::DEFAULT_LOAD_BATCH,
            client_threads: one_per_core,
            check: no_rules,
            check_value_size: any_size,
        }
    }

    /// Whether the store takes a setting of this name.
    pub fn takes(&self, setting: &str) -> bool {
        self.settings.iter().any(|s| s.name == setting)
    }
}

fn one_per_core(_concurrency: usize) -> Option<usize> {
    None
}

fn no_rules(_settings: &Settings) -> Result<(), DbError> {
    Ok(())
}

fn any_size(_settings: &Settings, _len: usize) -> Result<(), DbError> {
    Ok(())
}

/// The schemes of the stores `has` holds for, as `a://, b://` for messages and help.
pub fn schemes_where(has: impl Fn(&StoreDeclarations) -> bool) -> String {
    let schemes: Vec<String> = STORES
        .iter()
        .filter(|m| has(m))
        .map(|m| format!("{}://", m.scheme))
        .collect();
    schemes.join(", ")
}

/// Names as a sentence lists them: "A", "A and B", "A, B and C".
pub fn listed(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The store a URL scheme (or one of its aliases, or its scheme for TLS) names.
pub fn store_declarations(scheme: &str) -> Option<&'static StoreDeclarations> {
    STORES
        .iter()
        .find(|m| m.scheme == scheme || m.aliases.contains(&scheme) || m.tls_scheme == Some(scheme))
}

/// Makes [`STORES`] and [`AnyStore`] from the list in `db/mod.rs`. The stores' modules
/// are declared there by hand, where `cargo fmt` sees them.
macro_rules! stores {
    ($($variant:ident => $module:ident :: $store:ident),* $(,)?) => {
        /// Every store this build can talk to, in the order help lists them.
        pub static STORES: &[StoreDeclarations] = &[$(<$module::$store as DeclaredStore>::DECLARED),*];

        /// The store picked by the URL: an enum at the edge, generic code inside.
        pub enum AnyStore {
            $($variant(Box<$module::$store>)),*
        }

        /// Each store's scheme and the sizes of its key-value calls' futures.
        #[cfg(test)]
        fn kv_call_sizes() -> Vec<(&'static str, [usize; 4])> {
            vec![$((
                <$module::$store as DeclaredStore>::DECLARED.scheme,
                stores::kv_call_sizes_of::<$module::$store>(),
            )),*]
        }

        impl AnyStore {
            /// Whether the store keeps what it is sent ([`StoreDeclarations::holds_data`]).
            pub fn holds_data(&self) -> bool {
                match self { $(AnyStore::$variant(_) => <$module::$store as DeclaredStore>::DECLARED.holds_data,)* }
            }

            /// Opens the store the URL names (its settings are checked already).
            pub async fn connect(url: &DbUrl, options: &ConnectOptions) -> Result<AnyStore, DbError> {
                $(
                    if url.scheme() == <$module::$store as DeclaredStore>::DECLARED.scheme {
                        let store = <$module::$store as DeclaredStore>::connect(url, options).await?;
                        return Ok(AnyStore::$variant(Box::new(store)));
                    }
                )*
                Err(DbError::new(ErrorKind::Other, format!("no store for {url}")))
            }
        }

        impl Store for AnyStore {
            async fn setup(&self, owner: &Ownership) -> Result<(), DbError> {
                match self { $(AnyStore::$variant(db) => db.setup(owner).await,)* }
            }

            async fn setup_for_load(&self, owner: &Ownership) -> Result<(), DbError> {
                match self { $(AnyStore::$variant(db) => db.setup_for_load(owner).await,)* }
            }

            async fn key_loaded(&self) -> Result<Option<&'static str>, DbError> {
                match self { $(AnyStore::$variant(db) => db.key_loaded().await,)* }
            }

            async fn check_owned(&self) -> Result<Marker, DbError> {
                match self { $(AnyStore::$variant(db) => db.check_owned().await,)* }
            }

            async fn use_existing(&self) -> Result<(), DbError> {
                match self { $(AnyStore::$variant(db) => db.use_existing().await,)* }
            }

            async fn holding(&self) -> Result<Option<String>, DbError> {
                match self { $(AnyStore::$variant(db) => db.holding().await,)* }
            }

            async fn write_holding(&self, note: &str) -> Result<(), DbError> {
                match self { $(AnyStore::$variant(db) => db.write_holding(note).await,)* }
            }

            // The calls a run times are boxed arm by arm: a call then copies only its own
            // store's future into the heap (MariaDB's read: 1.6 KB), not the largest of
            // all the stores' (Cassandra's, 4.4 KB).
            async fn create_order(&self, order: &Order, payload: &str) -> Result<(), DbError> {
                match self { $(AnyStore::$variant(db) => Box::pin(db.create_order(order, payload)).await,)* }
            }

            async fn read_order(&self, order_id: OrderId) -> Result<Option<Order>, DbError> {
                match self { $(AnyStore::$variant(db) => Box::pin(db.read_order(order_id)).await,)* }
            }

            async fn update_order(&self, update: &OrderUpdate) -> Result<Applied, DbError> {
                match self { $(AnyStore::$variant(db) => Box::pin(db.update_order(update)).await,)* }
            }

            async fn update_items(&self, update: ItemsUpdate<'_>) -> Result<Applied, DbError> {
                match self { $(AnyStore::$variant(db) => Box::pin(db.update_items(update)).await,)* }
            }

            async fn update_status(&self, update: StatusUpdate) -> Result<Applied, DbError> {
                match self { $(AnyStore::$variant(db) => Box::pin(db.update_status(update)).await,)* }
            }

            async fn delete_order(&self, order_id: OrderId) -> Result<Applied, DbError> {
                match self { $(AnyStore::$variant(db) => Box::pin(db.delete_order(order_id)).await,)* }
            }

            async fn kv_write(&self, key: &KeyText, value: &[u8]) -> Result<(), DbError> {
                match self { $(AnyStore::$variant(db) => Box::pin(db.kv_write(key, value)).await,)* }
            }

            async fn kv_rewrite(&self, key: &KeyText, value: &[u8]) -> Result<Applied, DbError> {
                match self { $(AnyStore::$variant(db) => Box::pin(db.kv_rewrite(key, value)).await,)* }
            }

            async fn kv_read(&self, key: &KeyText) -> Result<Option<Vec<u8>>, DbError> {
                match self { $(AnyStore::$variant(db) => Box::pin(db.kv_read(key)).await,)* }
            }

            async fn kv_delete(&self, key: &KeyText) -> Result<Applied, DbError> {
                match self { $(AnyStore::$variant(db) => Box::pin(db.kv_delete(key)).await,)* }
            }

            async fn load_initial(&self, batch: &InitialBatch<'_>) -> Result<(), DbError> {
                match self { $(AnyStore::$variant(db) => Box::pin(db.load_initial(batch)).await,)* }
            }

            async fn snapshot(&self) -> Result<Snapshot, DbError> {
                match self { $(AnyStore::$variant(db) => db.snapshot().await,)* }
            }

            async fn kv_page(&self, cursor: Option<Vec<u8>>) -> Result<KvPage, DbError> {
                match self { $(AnyStore::$variant(db) => db.kv_page(cursor).await,)* }
            }


            fn facts(&self) -> StoreFacts {
                match self { $(AnyStore::$variant(db) => db.facts(),)* }
            }

            async fn settle(&self) {
                match self { $(AnyStore::$variant(db) => db.settle().await,)* }
            }

            async fn tidy_loaded(&self) -> Result<Option<&'static str>, DbError> {
                match self { $(AnyStore::$variant(db) => db.tidy_loaded().await,)* }
            }

            fn lane_threads(&self, concurrency: usize) -> bool {
                match self { $(AnyStore::$variant(db) => db.lane_threads(concurrency),)* }
            }

            async fn close(&self) {
                match self { $(AnyStore::$variant(db) => db.close().await,)* }
            }
        }

        impl DbTiming for AnyStore {
            async fn db_durations(&self, trace_ids: &[u128]) -> Result<Vec<Option<f64>>, DbError> {
                match self { $(AnyStore::$variant(db) => db.db_durations(trace_ids).await,)* }
            }

            async fn begin_db_timing(&self) -> Result<(), DbError> {
                match self { $(AnyStore::$variant(db) => db.begin_db_timing().await,)* }
            }

            async fn statement_times(&self) -> Result<Vec<StatementTime>, DbError> {
                match self { $(AnyStore::$variant(db) => db.statement_times().await,)* }
            }
        }

        impl BulkLoad for AnyStore {
            async fn load_setup(&self, shape: LoadShape) -> Result<(), DbError> {
                match self { $(AnyStore::$variant(db) => db.load_setup(shape).await,)* }
            }

            fn load_encode(&self, batch: &mut LoadBatch) {
                match self { $(AnyStore::$variant(db) => db.load_encode(batch),)* }
            }

            async fn load_batch(&self, batch: &LoadBatch) -> Result<(), LoadError> {
                match self { $(AnyStore::$variant(db) => db.load_batch(batch).await,)* }
            }

            async fn load_count(&self) -> Result<u64, DbError> {
                match self { $(AnyStore::$variant(db) => db.load_count().await,)* }
            }

            async fn load_read(&self, key: &str) -> Result<Option<Vec<Vec<u8>>>, DbError> {
                match self { $(AnyStore::$variant(db) => db.load_read(key).await,)* }
            }
        }
    };
}
pub(super) use stores;

/// The sizes of `S`'s four key-value calls' futures: write, rewrite, read, delete.
#[cfg(test)]
pub(super) fn kv_call_sizes_of<S: super::Store>() -> [usize; 4] {
    use crate::workload::KeyText;
    fn size<'a, S: 'a, F>(_call: impl Fn(&'a S, &'a KeyText) -> F) -> usize {
        std::mem::size_of::<F>()
    }
    [
        size(|s: &S, k| s.kv_write(k, b"")),
        size(|s: &S, k| s.kv_rewrite(k, b"")),
        size(|s: &S, k| s.kv_read(k)),
        size(|s: &S, k| s.kv_delete(k)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::{DbUrl, Value};

    #[test]
    fn every_store_declares_a_scheme_help_and_valid_settings() {
        let mut schemes = Vec::new();
        for meta in STORES {
            assert!(!meta.scheme.is_empty() && !meta.about.is_empty());
            assert!(
                meta.example.starts_with(&format!("{}://", meta.scheme)),
                "{}: example {}",
                meta.scheme,
                meta.example
            );
            for name in std::iter::once(meta.scheme).chain(meta.aliases.iter().copied()) {
                assert!(!schemes.contains(&name), "scheme {name} twice");
                schemes.push(name);
            }
            for setting in meta.settings {
                assert!(!setting.help.is_empty(), "{}.{}", meta.scheme, setting.name);
                if !setting.default.is_empty() {
                    let given = [(setting.name.to_string(), setting.default.to_string())];
                    Settings::checked(meta.scheme, meta.settings, given.into_iter().collect())
                        .unwrap_or_else(|e| panic!("default of {}: {e}", setting.name));
                }
                if let Value::Choice(words) = setting.value {
                    assert!(!words.is_empty());
                }
            }
            // The example URL's own settings are valid for the store.
            let url = DbUrl::parse(meta.example).unwrap();
            Settings::checked(meta.scheme, meta.settings, url.params()).unwrap();
            let defaults =
                Settings::checked(meta.scheme, meta.settings, Default::default()).unwrap();
            assert!((meta.default_concurrency)(&defaults) >= 1);
        }
    }

    /// `AnyStore` copies each call's future into the heap: a store's own wire keeps its
    /// key-value calls small enough for glibc's per-thread cache (1,032 bytes) by
    /// boxing what is rare (opening a connection) or not its own (the driver's path).
    #[test]
    fn an_own_wires_key_value_calls_stay_small() {
        let mut checked = 0;
        for (scheme, sizes) in super::super::kv_call_sizes() {
            let declared = store_declarations(scheme).unwrap();
            if !declared.takes("kv_wire") {
                continue;
            }
            checked += 1;
            assert!(
                sizes.iter().all(|&n| n <= 1024),
                "{scheme}: {sizes:?} bytes"
            );
        }
        assert!(checked >= 3, "stores with an own wire: {checked}");
    }

    /// A setting several stores take is one flag: of one kind and one default
    /// everywhere. A choice's words may differ by store (`kv_table`: each store's own
    /// peer's table), and `run --help` then shows each store's.
    #[test]
    fn a_setting_shared_by_stores_means_the_same_everywhere() {
        for a in STORES {
            for b in STORES {
                for sa in a.settings {
                    if let Some(sb) = b.settings.iter().find(|s| s.name == sa.name) {
                        let what = format!("{} in {} and {}", sa.name, a.scheme, b.scheme);
                        match (&sa.value, &sb.value) {
                            (Value::Choice(_), Value::Choice(_)) => {}
                            _ => assert_eq!(sa.value, sb.value, "{what}"),
                        }
                        assert_eq!(sa.default, sb.default, "{what}");
                    }
                }
            }
        }
    }
}
