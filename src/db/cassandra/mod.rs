//! Apache Cassandra through the `scylla` driver (it speaks CQL to Cassandra):
//! prepared statements only, a consistency level on every request, async requests
//! in flight from every lane at once.
//!
//! Settings (`options.rs`): replication, consistency levels, schema variant, batch
//! mode, lightweight transactions. Schemas (`statements.rs`): `by-order` (default)
//! keeps the items in `line_items_by_order`, one partition per order, the query-first
//! design; `by-item` keeps each item in its own partition of `line_items` and the
//! order holds the list of its item ids, so reading or deleting an order touches every
//! item: the naive design the seeds started from. hatshop owns the keyspace: it drops
//! it only when it holds hatshop's marker table.

mod bulk_load;
mod columns;
mod db_time;
mod errors;
mod login;
mod options;
mod read_back;
mod requests;
mod statements;

use std::collections::BTreeMap;
use std::net::{IpAddr, ToSocketAddrs};
use std::sync::Arc;

use futures::future::try_join_all;
use scylla::client::execution_profile::{ExecutionProfile, ExecutionProfileHandle};
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::policies::retry::{DefaultRetryPolicy, FallthroughRetryPolicy, RetryPolicy};
use scylla::policies::timestamp_generator::MonotonicTimestampGenerator;
use scylla::response::query_result::QueryResult;
use scylla::statement::{Consistency, Statement};
use scylla::value::{CqlValue, Row};
use tokio::sync::OnceCell;

use self::columns::{ListedOrder, big, text};
use self::errors::{classify, other};
use self::options::{CassandraOptions, Schema};
use self::statements::{Prepared, table_ddl};
use super::ownership::{self, MARKER, Marker, Ownership};
use super::{
    Applied, ConnectOptions, DbError, DbUrl, DeclaredStore, ErrorKind, KvPage, OrderRow, Snapshot,
    Store, StoreDeclarations, StoreFacts,
};
use crate::workload::{ItemsUpdate, KeyText, LineItem, Order, OrderId, OrderUpdate, StatusUpdate};

/// Cassandra over CQL: one session, prepared statements, the asked consistency.
pub struct CassandraStore {
    session: Session,
    keyspace: String,
    target: String,
    options: CassandraOptions,
    version: String,
    /// Node numbers by address: the URL's hosts in order, then any other node of the
    /// ring the driver found, by address. A request's coordinator is reported by number.
    nodes: Vec<IpAddr>,
    /// Prepared on first use: after `setup` in a run, against existing tables in `verify`.
    prepared: OnceCell<Prepared>,
    /// The profile of requests that a deadline of hatshop's own bounds, without the
    /// driver's timeout: the lanes' calls (the lane's watchdog ends a call past
    /// --op-timeout; a timer per request cost about 3 % of the client's CPU on
    /// `race-cql-read`) and schema changes (setup's deadline: a DROP KEYSPACE may take
    /// longer than an operation is allowed to).
    watched: ExecutionProfileHandle,
    /// The bulk load's insert, once `load_setup` made its table.
    load: std::sync::OnceLock<bulk_load::LoadInsert>,
    /// The TLS the connections speak, as run.json says it.
    tls: String,
    /// Where the password came from (not the password).
    password_from: Option<String>,
}

impl DeclaredStore for CassandraStore {
    const DECLARED: StoreDeclarations = StoreDeclarations {
        login: true,
        db_time: Some(db_time::DB_TIME),
        traces_batches: Some("Cassandra (CQL tracing)"),
        // One, as latte runs by default: at 1, 4 and 16 requests in flight one thread
        // inserted as fast as two or faster, for less CPU per request.
        client_threads: |_| Some(1),
        check: |settings| CassandraOptions::parse(settings).map(|_| ()),
        ..StoreDeclarations::new(
            "cassandra",
            "Apache Cassandra (CQL); several hosts: a ring",
            "cassandra://127.0.0.1:9042/hatshop?rf=1&cl=QUORUM",
            options::SETTINGS,
            // Async requests: many in flight from few connections.
            |_| 16,
        )
    };

    async fn connect(url: &DbUrl, options: &ConnectOptions) -> Result<Self, DbError> {
        let cassandra = CassandraOptions::parse(&options.settings)?;
        let address = url
            .address(9042)
            .map_err(|e| DbError::new(ErrorKind::Connection, e))?;
        let keyspace = keyspace_of(address.name.as_deref())?;
        let (profile, watched) = profiles(&cassandra, options);
        let login = login::login(&address, &options.settings, login::cqlshrc())?;
        let (first_host, first_port) = &address.hosts[0];
        let tls = login.tls.client(first_host, *first_port)?;
        let mut builder = SessionBuilder::new()
            .known_nodes(address.hosts.iter().map(|(h, p)| format!("{h}:{p}")))
            .connection_timeout(options.connect_timeout)
            .default_execution_profile_handle(profile.into_handle());
        if let Some(user) = &login.user {
            builder = builder.user(user, login.password.as_deref().unwrap_or(""));
        }
        // The driver says a failed handshake in words of its own: hatshop's own
        // handshake first says which certificate failed and why.
        let tls_spoken = match &tls {
            Some(tls) => {
                builder = builder.tls_context(Some(tls.config.clone()));
                let probe =
                    crate::db::wire::probe(first_host, *first_port, tls, options.connect_timeout);
                Some(probe.await?)
            }
            None => None,
        };
        if cassandra.client_timestamps {
            builder = builder.timestamp_generator(Arc::new(
                MonotonicTimestampGenerator::new().without_warnings(),
            ));
        }
        let session = builder.build().await.map_err(|e| match tls.as_ref() {
            Some(tls) => crate::db::tls::explain(&e, tls),
            None => DbError::new(ErrorKind::Connection, e.to_string()),
        })?;
        let version = release_version(&session).await?;
        let nodes = number_nodes(&address.hosts, &session);
        Ok(CassandraStore {
            session,
            nodes,
            keyspace,
            target: url.to_string(),
            options: cassandra,
            version: format!("Apache Cassandra {version}"),
            prepared: OnceCell::new(),
            watched,
            load: std::sync::OnceLock::new(),
            tls: match (&tls, tls_spoken) {
                (Some(tls), Some(facts)) => format!("{} ({})", facts.summary(), tls.mode_source),
                _ => "off".into(),
            },
            password_from: login.password_from,
        })
    }
}

/// The keyspace a URL names (`hatshop` when it names none), refused unless CQL
/// takes it unquoted.
fn keyspace_of(name: Option<&str>) -> Result<String, DbError> {
    let keyspace = name.unwrap_or("hatshop");
    if keyspace.is_empty()
        || !keyspace
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return Err(other(format!(
            "keyspace '{keyspace}': use letters, digits and _"
        )));
    }
    Ok(keyspace.to_string())
}

/// The profile timed operations run under, and the one schema work and checks
/// run under (no request timeout: a schema change takes what it takes).
fn profiles(
    cassandra: &CassandraOptions,
    options: &ConnectOptions,
) -> (ExecutionProfile, ExecutionProfileHandle) {
    // No silent retries by default: a failure is counted where it happened, and
    // --retries repeats it in the open, counted apart.
    let retry_policy: Arc<dyn RetryPolicy> = if cassandra.driver_retries {
        Arc::new(DefaultRetryPolicy::new())
    } else {
        Arc::new(FallthroughRetryPolicy::new())
    };
    let profile = ExecutionProfile::builder()
        .request_timeout(Some(options.op_timeout))
        .retry_policy(retry_policy);
    let watched = profile.clone().request_timeout(None).build().into_handle();
    (profile.build(), watched)
}

async fn release_version(session: &Session) -> Result<String, DbError> {
    Ok(session
        .query_unpaged("SELECT release_version FROM system.local", ())
        .await
        .map_err(classify)?
        .into_rows_result()
        .map_err(other)?
        .maybe_first_row::<(Option<String>,)>()
        .map_err(other)?
        .and_then(|(v,)| v)
        .unwrap_or_default())
}

impl CassandraStore {
    async fn statements(&self) -> Result<&Prepared, DbError> {
        self.prepared
            // Boxed: preparing happens once, and inline its future would be part of
            // every call's, which is copied whole into the heap on each call
            // (`AnyStore`).
            .get_or_try_init(|| {
                Box::pin(Prepared::new(
                    &self.session,
                    &self.keyspace,
                    &self.options,
                    &self.watched,
                ))
            })
            .await
    }

    /// Runs a schema statement; an error names the statement.
    async fn ddl(&self, statement: &str) -> Result<QueryResult, DbError> {
        let mut request = Statement::new(statement);
        request.set_execution_profile_handle(Some(self.watched.clone()));
        self.session
            .query_unpaged(request, ())
            .await
            .map_err(|e| classify(e).context(format!("`{statement}` failed")))
    }

    /// by-item: an order row with the ids of its items.
    async fn listed_order(&self, order_id: OrderId) -> Result<Option<ListedOrder>, DbError> {
        let p = self.statements().await?;
        let result = self.run(&p.select_order, vec![big(order_id)]).await?;
        result
            .into_rows_result()
            .map_err(other)?
            .maybe_first_row::<ListedOrder>()
            .map_err(other)
    }

    /// The tables of hatshop's keyspace, or `None` when the keyspace does not exist.
    async fn keyspace_tables(&self) -> Result<Option<Vec<String>>, DbError> {
        let ks = &self.keyspace;
        let exists = self
            .ddl(&format!(
                "SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = '{ks}'"
            ))
            .await?
            .into_rows_result()
            .map_err(other)?
            .rows_num()
            > 0;
        if !exists {
            return Ok(None);
        }
        let rows = self
            .ddl(&format!(
                "SELECT table_name FROM system_schema.tables WHERE keyspace_name = '{ks}'"
            ))
            .await?
            .into_rows_result()
            .map_err(other)?;
        let tables = rows
            .rows::<(String,)>()
            .map_err(other)?
            .map(|r| r.map(|(t,)| t))
            .collect::<Result<Vec<_>, _>>()
            .map_err(other)?;
        Ok(Some(tables))
    }
}

impl Store for CassandraStore {
    async fn setup(&self, owner: &Ownership) -> Result<(), DbError> {
        let ks = &self.keyspace;
        if let Some(tables) = self.keyspace_tables().await? {
            // hatshop drops the whole keyspace: it must be hatshop's.
            let found = if tables.iter().any(|t| t == MARKER) {
                vec![MARKER.to_string()]
            } else {
                vec![format!("keyspace {ks}")]
            };
            owner.may_drop(&self.target, &found)?;
            self.ddl(&format!("DROP KEYSPACE {ks}")).await?;
        }
        self.ddl(&format!(
            "CREATE KEYSPACE {ks} WITH replication = {} AND durable_writes = {}",
            self.options.replication, self.options.durable_writes
        ))
        .await?;
        for statement in table_ddl(ks, self.options.schema) {
            self.ddl(&statement).await?;
        }
        // The marker is hatshop's bookkeeping: written at ONE, so a keyspace whose
        // replication the ring cannot meet is still marked (and its runs' errors counted).
        let mut marker = Statement::new(format!(
            "INSERT INTO {ks}.{MARKER} (name, made_by) VALUES ('hatshop', '{}')",
            owner.note.replace('\'', "''")
        ));
        marker.set_consistency(Consistency::One);
        self.session
            .query_unpaged(marker, ())
            .await
            .map_err(|e| classify(e).context("cannot write hatshop's marker"))?;
        // Prepared now, so that no measured operation pays for it.
        self.statements().await?;
        Ok(())
    }

    async fn check_owned(&self) -> Result<Marker, DbError> {
        match self.keyspace_tables().await? {
            Some(tables) if tables.iter().any(|t| t == MARKER) => {}
            _ => return Err(ownership::not_ours(&self.target)),
        }
        let rows = self
            .ddl(&format!(
                "SELECT made_by FROM {}.{MARKER} WHERE name = 'hatshop'",
                self.keyspace
            ))
            .await?
            .into_rows_result()
            .map_err(other)?;
        let made_by = rows
            .maybe_first_row::<(String,)>()
            .map_err(other)?
            .map(|(made_by,)| made_by);
        Ok(Marker {
            made_by: made_by.unwrap_or_default(),
        })
    }

    async fn holding(&self) -> Result<Option<String>, DbError> {
        let rows = self
            .ddl(&format!(
                "SELECT made_by FROM {}.{MARKER} WHERE name = 'holding'",
                self.keyspace
            ))
            .await?
            .into_rows_result()
            .map_err(other)?;
        Ok(rows
            .maybe_first_row::<(String,)>()
            .map_err(other)?
            .map(|(note,)| note))
    }

    async fn write_holding(&self, note: &str) -> Result<(), DbError> {
        // An upsert: the row's one cell is overwritten. CQL quotes a quote by doubling it.
        self.ddl(&format!(
            "INSERT INTO {}.{MARKER} (name, made_by) VALUES ('holding', '{}')",
            self.keyspace,
            note.replace('\'', "''")
        ))
        .await
        .map(drop)
    }

    async fn use_existing(&self) -> Result<(), DbError> {
        self.check_owned().await?;
        self.statements().await?;
        Ok(())
    }

    async fn create_order(&self, order: &Order, payload: &str) -> Result<(), DbError> {
        let p = self.statements().await?;
        let mut order_values = vec![
            big(order.order_id),
            big(order.client_id),
            text(&order.customer),
            text(&order.address),
            CqlValue::BigInt(order.created_at_ms),
            text(order.status.as_str()),
            CqlValue::BigInt(order.subtotal_cents),
            text(payload),
        ];
        if self.options.schema == Schema::ByItem {
            let ids = order.items.iter().map(|i| big(i.line_item_id)).collect();
            order_values.push(CqlValue::List(ids));
        }
        let mut writes = vec![(&p.insert_order, order_values)];
        for item in &order.items {
            writes.push((
                &p.insert_item,
                vec![
                    big(order.order_id),
                    big(item.line_item_id),
                    text(&item.product),
                    text(&item.colour),
                    text(&item.size),
                    CqlValue::Int(item.quantity as i32),
                    CqlValue::BigInt(item.unit_price_cents),
                ],
            ));
        }
        self.write_all(writes).await
    }

    async fn read_order(&self, order_id: OrderId) -> Result<Option<Order>, DbError> {
        let p = self.statements().await?;
        match self.options.schema {
            Schema::ByOrder => {
                let (order, items) = tokio::try_join!(
                    self.run(&p.select_order, vec![big(order_id)]),
                    self.run(&p.select_items, vec![big(order_id)]),
                )?;
                let Some(row) = order
                    .into_rows_result()
                    .map_err(other)?
                    .maybe_first_row::<OrderRow>()
                    .map_err(other)?
                else {
                    return Ok(None);
                };
                let items = items
                    .into_rows_result()
                    .map_err(other)?
                    .rows::<LineItem>()
                    .map_err(other)?
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(other)?;
                Ok(Some(crate::db::order_of(row, items)))
            }
            Schema::ByItem => {
                let Some(ListedOrder { row, item_ids }) = self.listed_order(order_id).await? else {
                    return Ok(None);
                };
                let reads = item_ids
                    .into_iter()
                    .map(|id| self.run(&p.select_items, vec![CqlValue::BigInt(id)]));
                let mut items = Vec::new();
                for result in try_join_all(reads).await? {
                    let rows = result.into_rows_result().map_err(other)?;
                    if let Some(item) = rows.maybe_first_row::<LineItem>().map_err(other)? {
                        items.push(item);
                    }
                }
                items.sort_by_key(|i| i.line_item_id);
                Ok(Some(crate::db::order_of(row, items)))
            }
        }
    }

    async fn update_order(&self, update: &OrderUpdate) -> Result<Applied, DbError> {
        let order_id = update.order_id;
        let p = self.statements().await?;
        self.run(
            &p.update_order,
            vec![
                CqlValue::BigInt(update.created_at_ms),
                text(update.status.as_str()),
                CqlValue::BigInt(update.subtotal_cents),
                big(order_id),
            ],
        )
        .await?;
        // A CQL UPDATE is an upsert: it cannot tell whether the order was there.
        Ok(Applied::Unknown)
    }

    async fn update_items(&self, update: ItemsUpdate<'_>) -> Result<Applied, DbError> {
        let order_id = update.order_id;
        let p = self.statements().await?;
        let mut writes = Vec::with_capacity(update.changes.len() + 1);
        for change in update.changes {
            let mut values = vec![
                text(&change.colour),
                text(&change.size),
                CqlValue::Int(change.quantity as i32),
            ];
            if self.options.schema == Schema::ByOrder {
                values.push(big(order_id));
            }
            values.push(big(change.line_item_id));
            writes.push((&p.update_item, values));
        }
        writes.push((
            &p.update_subtotal,
            vec![CqlValue::BigInt(update.subtotal_cents), big(order_id)],
        ));
        self.write_all(writes).await?;
        Ok(Applied::Unknown)
    }

    async fn update_status(&self, update: StatusUpdate) -> Result<Applied, DbError> {
        let StatusUpdate { order_id, status } = update;
        let p = self.statements().await?;
        let result = self
            .run(&p.update_status, vec![text(status.as_str()), big(order_id)])
            .await?;
        if !self.options.lwt {
            return Ok(Applied::Unknown);
        }
        let row = result
            .into_rows_result()
            .map_err(other)?
            .maybe_first_row::<Row>()
            .map_err(other)?;
        match row.and_then(|r| r.columns.into_iter().next().flatten()) {
            Some(CqlValue::Boolean(true)) => Ok(Applied::Yes),
            Some(CqlValue::Boolean(false)) => Ok(Applied::NotFound),
            _ => Err(other("IF EXISTS returned no [applied] column")),
        }
    }

    async fn delete_order(&self, order_id: OrderId) -> Result<Applied, DbError> {
        let p = self.statements().await?;
        let mut writes = Vec::new();
        match self.options.schema {
            Schema::ByOrder => writes.push((&p.delete_items, vec![big(order_id)])),
            Schema::ByItem => {
                // The naive design has to read the order to find its items.
                let ids = self.listed_order(order_id).await?.map(|o| o.item_ids);
                for id in ids.unwrap_or_default() {
                    writes.push((&p.delete_items, vec![CqlValue::BigInt(id)]));
                }
            }
        }
        writes.push((&p.delete_order, vec![big(order_id)]));
        self.write_all(writes).await?;
        Ok(Applied::Unknown)
    }

    async fn kv_write(&self, key: &KeyText, value: &[u8]) -> Result<(), DbError> {
        let p = self.statements().await?;
        self.run(&p.kv_put, (key.as_str(), value)).await?;
        Ok(())
    }

    async fn kv_rewrite(&self, key: &KeyText, value: &[u8]) -> Result<Applied, DbError> {
        self.kv_write(key, value).await?;
        Ok(Applied::Unknown)
    }

    async fn kv_read(&self, key: &KeyText) -> Result<Option<Vec<u8>>, DbError> {
        let p = self.statements().await?;
        let result = self.run(&p.kv_get, (key.as_str(),)).await?;
        Ok(result
            .into_rows_result()
            .map_err(other)?
            .maybe_first_row::<(Option<Vec<u8>>,)>()
            .map_err(other)?
            .and_then(|(v,)| v))
    }

    async fn kv_delete(&self, key: &KeyText) -> Result<Applied, DbError> {
        let p = self.statements().await?;
        self.run(&p.kv_delete, (key.as_str(),)).await?;
        Ok(Applied::Unknown)
    }

    /// Read back at ALL: the newest write of any replica wins, a delete that reached
    /// one replica included. With a replica down, QUORUM is the most there is.
    async fn snapshot(&self) -> Result<Snapshot, DbError> {
        match self.snapshot_at(Consistency::All).await {
            Err(e) if e.kind == ErrorKind::Unavailable => {
                crate::console::note!("a replica is down: reading back at QUORUM");
                self.snapshot_at(Consistency::Quorum).await
            }
            result => result,
        }
    }

    async fn kv_page(&self, cursor: Option<Vec<u8>>) -> Result<KvPage, DbError> {
        self.kv_page_read_back(cursor).await
    }

    fn facts(&self) -> StoreFacts {
        let mut settings: BTreeMap<String, String> = self
            .options
            .describe()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        settings.insert("keyspace".into(), self.keyspace.clone());
        let nodes: Vec<String> = self.nodes.iter().map(IpAddr::to_string).collect();
        settings.insert("nodes".into(), nodes.join(","));
        StoreFacts::logged_in(
            Self::DECLARED.scheme,
            &self.version,
            settings,
            self.tls.clone(),
            self.password_from.as_deref(),
        )
    }
}

/// Numbers the ring's nodes for the op log: the URL's hosts first, in their order, then
/// the nodes the driver discovered beyond them, by address.
fn number_nodes(hosts: &[(String, u16)], session: &Session) -> Vec<IpAddr> {
    let mut nodes: Vec<IpAddr> = Vec::new();
    for (host, port) in hosts {
        let ip = host.parse::<IpAddr>().ok().or_else(|| {
            (host.as_str(), *port)
                .to_socket_addrs()
                .ok()
                .and_then(|mut addrs| addrs.next())
                .map(|addr| addr.ip())
        });
        if let Some(ip) = ip.filter(|ip| !nodes.contains(ip)) {
            nodes.push(ip);
        }
    }
    let state = session.get_cluster_state();
    let mut discovered: Vec<IpAddr> = state
        .get_nodes_info()
        .iter()
        .map(|node| node.address.ip())
        .filter(|ip| !nodes.contains(ip))
        .collect();
    discovered.sort();
    nodes.extend(discovered);
    nodes
}
