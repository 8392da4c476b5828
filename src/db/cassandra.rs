//! Apache Cassandra through the `scylla` driver (it speaks CQL to Cassandra):
//! prepared statements only, a consistency level on every request, async requests
//! in flight from every lane at once.
//!
//! Settings (URL `?key=value` or flags): `rf=N` (SimpleStrategy, default 1) or
//! `replication=dc1:2,dc2:1` (NetworkTopologyStrategy); `cl`, `read_cl`, `write_cl`
//! (default QUORUM, so every read sees the writes before it); `schema=by-order|by-item`;
//! `batch=logged|unlogged|none`; `lwt=true` (`update_status … IF EXISTS`).
//!
//! Schemas: `by-order` (default) keeps the items in `line_items_by_order`, one
//! partition per order, the query-first design. `by-item` keeps each item in its own
//! partition of `line_items` and the order holds the list of its item ids, so reading
//! or deleting an order touches every item: the naive design the seeds started from.

use std::collections::BTreeMap;
use std::time::Duration;

use futures::TryStreamExt;
use futures::future::try_join_all;
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::errors::{DbError as CqlError, ExecutionError, RequestAttemptError};
use scylla::response::query_result::QueryResult;
use scylla::statement::Consistency;
use scylla::statement::batch::{Batch, BatchType};
use scylla::statement::prepared::PreparedStatement;
use scylla::value::{CqlValue, Row};
use tokio::sync::OnceCell;

use super::settings::Settings;
use super::{Applied, DbError, DbUrl, ErrorKind, OrderRow, Snapshot, StoreInfo};
use crate::workload::{ItemChange, LineItem, Order, OrderId, OrderStatus};

const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const KNOWN: &[&str] = &[
    "rf",
    "replication",
    "cl",
    "read_cl",
    "write_cl",
    "schema",
    "batch",
    "lwt",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Schema {
    ByOrder,
    ByItem,
}

/// How a write of several statements is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BatchMode {
    Logged,
    Unlogged,
    /// Every statement on its own, all in flight at once.
    None,
}

/// The statements of one schema, prepared with their consistency levels.
struct Prepared {
    insert_order: PreparedStatement,
    insert_item: PreparedStatement,
    select_order: PreparedStatement,
    /// by-order: the items of an order; by-item: one item by id.
    select_items: PreparedStatement,
    update_item: PreparedStatement,
    update_subtotal: PreparedStatement,
    update_status: PreparedStatement,
    delete_order: PreparedStatement,
    /// by-order: the order's item partition; by-item: one item by id.
    delete_items: PreparedStatement,
}

pub struct CassandraStore {
    session: Session,
    keyspace: String,
    replication: String,
    read_cl: Consistency,
    write_cl: Consistency,
    schema: Schema,
    batch: BatchMode,
    lwt: bool,
    version: String,
    prepared: OnceCell<Prepared>,
}

fn parse_consistency(text: &str) -> Result<Consistency, DbError> {
    Ok(match text.to_ascii_uppercase().as_str() {
        "ANY" => Consistency::Any,
        "ONE" => Consistency::One,
        "TWO" => Consistency::Two,
        "THREE" => Consistency::Three,
        "QUORUM" => Consistency::Quorum,
        "ALL" => Consistency::All,
        "LOCAL_QUORUM" => Consistency::LocalQuorum,
        "EACH_QUORUM" => Consistency::EachQuorum,
        "LOCAL_ONE" => Consistency::LocalOne,
        other => {
            return Err(DbError::new(
                ErrorKind::Other,
                format!(
                    "unknown consistency level '{other}': expected ONE, TWO, THREE, QUORUM, ALL, \
                     LOCAL_QUORUM, EACH_QUORUM, LOCAL_ONE or ANY"
                ),
            ));
        }
    })
}

fn consistency_name(level: Consistency) -> &'static str {
    match level {
        Consistency::Any => "ANY",
        Consistency::One => "ONE",
        Consistency::Two => "TWO",
        Consistency::Three => "THREE",
        Consistency::Quorum => "QUORUM",
        Consistency::All => "ALL",
        Consistency::LocalQuorum => "LOCAL_QUORUM",
        Consistency::EachQuorum => "EACH_QUORUM",
        Consistency::LocalOne => "LOCAL_ONE",
        _ => "OTHER",
    }
}

fn classify(error: ExecutionError) -> DbError {
    let kind = match &error {
        ExecutionError::LastAttemptError(RequestAttemptError::DbError(db, _)) => match db {
            CqlError::Unavailable { .. }
            | CqlError::Overloaded
            | CqlError::IsBootstrapping
            | CqlError::RateLimitReached { .. } => ErrorKind::Unavailable,
            CqlError::ReadTimeout { .. } | CqlError::WriteTimeout { .. } => ErrorKind::Timeout,
            CqlError::AlreadyExists { .. } => ErrorKind::Constraint,
            CqlError::AuthenticationError | CqlError::Unauthorized => ErrorKind::Connection,
            _ => ErrorKind::Other,
        },
        ExecutionError::LastAttemptError(
            RequestAttemptError::BrokenConnectionError(_)
            | RequestAttemptError::UnableToAllocStreamId,
        )
        | ExecutionError::ConnectionPoolError(_) => ErrorKind::Connection,
        ExecutionError::RequestTimeout(_) => ErrorKind::Timeout,
        ExecutionError::EmptyPlan => ErrorKind::Unavailable,
        _ => ErrorKind::Other,
    };
    DbError::new(kind, error.to_string())
}

fn other(error: impl std::fmt::Display) -> DbError {
    DbError::new(ErrorKind::Other, error.to_string())
}

fn big(n: u64) -> CqlValue {
    CqlValue::BigInt(n as i64)
}

fn text(s: &str) -> CqlValue {
    CqlValue::Text(s.to_string())
}

impl CassandraStore {
    pub async fn open(url: &DbUrl, settings: &Settings) -> Result<Self, DbError> {
        let mut reader = settings.reader("cassandra");
        let rf: Option<u32> = reader.parsed("rf", "a replication factor")?;
        let replication = match (reader.text("replication"), rf) {
            (Some(_), Some(_)) => {
                return Err(other("give either rf or replication, not both"));
            }
            (Some(dcs), None) => {
                let mut parts = Vec::new();
                for dc in dcs.split(',') {
                    let (name, n) = dc.split_once(':').ok_or_else(|| {
                        other(format!("replication '{dcs}': expected dc1:2,dc2:1"))
                    })?;
                    let n: u32 = n.parse().map_err(|_| {
                        other(format!("replication '{dcs}': '{n}' is not a number"))
                    })?;
                    parts.push(format!("'{name}': {n}"));
                }
                format!(
                    "{{'class': 'NetworkTopologyStrategy', {}}}",
                    parts.join(", ")
                )
            }
            (None, rf) => format!(
                "{{'class': 'SimpleStrategy', 'replication_factor': {}}}",
                rf.unwrap_or(1)
            ),
        };
        let cl = reader.text("cl");
        let read_cl = parse_consistency(
            &reader
                .text("read_cl")
                .or(cl.clone())
                .unwrap_or("QUORUM".into()),
        )?;
        let write_cl =
            parse_consistency(&reader.text("write_cl").or(cl).unwrap_or("QUORUM".into()))?;
        let schema = match reader.text("schema").as_deref() {
            None | Some("by-order") => Schema::ByOrder,
            Some("by-item") => Schema::ByItem,
            Some(other_value) => {
                return Err(other(format!(
                    "schema '{other_value}': expected by-order or by-item"
                )));
            }
        };
        let batch = match reader.text("batch").as_deref() {
            None | Some("logged") => BatchMode::Logged,
            Some("unlogged") => BatchMode::Unlogged,
            Some("none") => BatchMode::None,
            Some(other_value) => {
                return Err(other(format!(
                    "batch '{other_value}': expected logged, unlogged or none"
                )));
            }
        };
        let lwt = reader.parsed("lwt", "true or false")?.unwrap_or(false);
        reader.finish(KNOWN)?;

        let address = url
            .address(9042)
            .map_err(|e| DbError::new(ErrorKind::Connection, e))?;
        let keyspace = address.name.clone().unwrap_or_else(|| "hatshop".into());
        if !keyspace
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            return Err(other(format!(
                "keyspace '{keyspace}': use letters, digits and _"
            )));
        }
        let mut builder = SessionBuilder::new()
            .known_nodes(address.hosts.iter().map(|(h, p)| format!("{h}:{p}")))
            .connection_timeout(CONNECT_TIMEOUT);
        if let Some(user) = &address.user {
            builder = builder.user(user, address.password.as_deref().unwrap_or(""));
        }
        let session = tokio::time::timeout(CONNECT_TIMEOUT * 2, builder.build())
            .await
            .map_err(|_| DbError::new(ErrorKind::Timeout, "no answer within 20 s"))?
            .map_err(|e| DbError::new(ErrorKind::Connection, e.to_string()))?;
        let version = session
            .query_unpaged("SELECT release_version FROM system.local", ())
            .await
            .map_err(classify)?
            .into_rows_result()
            .map_err(other)?
            .maybe_first_row::<(Option<String>,)>()
            .map_err(other)?
            .and_then(|(v,)| v)
            .unwrap_or_default();
        Ok(CassandraStore {
            session,
            keyspace,
            replication,
            read_cl,
            write_cl,
            schema,
            batch,
            lwt,
            version,
            prepared: OnceCell::new(),
        })
    }

    fn table_ddl(&self) -> Vec<String> {
        let ks = &self.keyspace;
        let order_columns = "order_id bigint PRIMARY KEY, client_id bigint, customer text, address text, \
                             created_at_ms bigint, status text, subtotal_cents bigint";
        let item_columns =
            "product text, colour text, size text, quantity int, unit_price_cents bigint";
        match self.schema {
            Schema::ByOrder => vec![
                format!("CREATE TABLE {ks}.orders ({order_columns})"),
                format!(
                    "CREATE TABLE {ks}.line_items_by_order (order_id bigint, line_item_id bigint, {item_columns}, \
                     PRIMARY KEY (order_id, line_item_id))"
                ),
            ],
            Schema::ByItem => vec![
                format!("CREATE TABLE {ks}.orders ({order_columns}, line_item_ids list<bigint>)"),
                format!(
                    "CREATE TABLE {ks}.line_items (line_item_id bigint PRIMARY KEY, order_id bigint, {item_columns})"
                ),
            ],
        }
    }

    async fn prepare(
        &self,
        cql: &str,
        consistency: Consistency,
    ) -> Result<PreparedStatement, DbError> {
        let mut statement =
            self.session.prepare(cql).await.map_err(|e| {
                DbError::new(ErrorKind::Other, format!("cannot prepare `{cql}`: {e}"))
            })?;
        statement.set_consistency(consistency);
        Ok(statement)
    }

    async fn statements(&self) -> Result<&Prepared, DbError> {
        self.prepared.get_or_try_init(|| self.prepare_all()).await
    }

    async fn prepare_all(&self) -> Result<Prepared, DbError> {
        let ks = &self.keyspace;
        let (r, w) = (self.read_cl, self.write_cl);
        let if_exists = if self.lwt { " IF EXISTS" } else { "" };
        let order_select =
            "order_id, client_id, customer, address, created_at_ms, status, subtotal_cents";
        let item_select = "line_item_id, product, colour, size, quantity, unit_price_cents";
        Ok(match self.schema {
            Schema::ByOrder => Prepared {
                insert_order: self.prepare(&format!("INSERT INTO {ks}.orders ({order_select}) VALUES (?, ?, ?, ?, ?, ?, ?)"), w).await?,
                insert_item: self
                    .prepare(
                        &format!("INSERT INTO {ks}.line_items_by_order (order_id, {item_select}) VALUES (?, ?, ?, ?, ?, ?, ?)"),
                        w,
                    )
                    .await?,
                select_order: self.prepare(&format!("SELECT {order_select} FROM {ks}.orders WHERE order_id = ?"), r).await?,
                select_items: self
                    .prepare(&format!("SELECT {item_select} FROM {ks}.line_items_by_order WHERE order_id = ?"), r)
                    .await?,
                update_item: self
                    .prepare(
                        &format!(
                            "UPDATE {ks}.line_items_by_order SET colour = ?, size = ?, quantity = ? \
                             WHERE order_id = ? AND line_item_id = ?"
                        ),
                        w,
                    )
                    .await?,
                update_subtotal: self.prepare(&format!("UPDATE {ks}.orders SET subtotal_cents = ? WHERE order_id = ?"), w).await?,
                update_status: self
                    .prepare(&format!("UPDATE {ks}.orders SET status = ? WHERE order_id = ?{if_exists}"), w)
                    .await?,
                delete_order: self.prepare(&format!("DELETE FROM {ks}.orders WHERE order_id = ?"), w).await?,
                delete_items: self.prepare(&format!("DELETE FROM {ks}.line_items_by_order WHERE order_id = ?"), w).await?,
            },
            Schema::ByItem => Prepared {
                insert_order: self
                    .prepare(
                        &format!("INSERT INTO {ks}.orders ({order_select}, line_item_ids) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"),
                        w,
                    )
                    .await?,
                insert_item: self
                    .prepare(
                        &format!("INSERT INTO {ks}.line_items (order_id, {item_select}) VALUES (?, ?, ?, ?, ?, ?, ?)"),
                        w,
                    )
                    .await?,
                select_order: self
                    .prepare(&format!("SELECT {order_select}, line_item_ids FROM {ks}.orders WHERE order_id = ?"), r)
                    .await?,
                select_items: self
                    .prepare(&format!("SELECT {item_select} FROM {ks}.line_items WHERE line_item_id = ?"), r)
                    .await?,
                update_item: self
                    .prepare(
                        &format!("UPDATE {ks}.line_items SET colour = ?, size = ?, quantity = ? WHERE line_item_id = ?"),
                        w,
                    )
                    .await?,
                update_subtotal: self.prepare(&format!("UPDATE {ks}.orders SET subtotal_cents = ? WHERE order_id = ?"), w).await?,
                update_status: self
                    .prepare(&format!("UPDATE {ks}.orders SET status = ? WHERE order_id = ?{if_exists}"), w)
                    .await?,
                delete_order: self.prepare(&format!("DELETE FROM {ks}.orders WHERE order_id = ?"), w).await?,
                delete_items: self.prepare(&format!("DELETE FROM {ks}.line_items WHERE line_item_id = ?"), w).await?,
            },
        })
    }

    /// Sends several writes as one batch, or all at once on their own (`batch=none`).
    async fn write_all(
        &self,
        writes: Vec<(&PreparedStatement, Vec<CqlValue>)>,
    ) -> Result<(), DbError> {
        let batch_type =
            match self.batch {
                BatchMode::Logged => BatchType::Logged,
                BatchMode::Unlogged => BatchType::Unlogged,
                BatchMode::None => {
                    try_join_all(writes.iter().map(|(statement, values)| {
                        self.session.execute_unpaged(statement, values)
                    }))
                    .await
                    .map_err(classify)?;
                    return Ok(());
                }
            };
        let mut batch = Batch::new(batch_type);
        batch.set_consistency(self.write_cl);
        let mut values = Vec::with_capacity(writes.len());
        for (statement, row) in writes {
            batch.append_statement(statement.clone());
            values.push(row);
        }
        self.session.batch(&batch, values).await.map_err(classify)?;
        Ok(())
    }

    async fn run(
        &self,
        statement: &PreparedStatement,
        values: Vec<CqlValue>,
    ) -> Result<QueryResult, DbError> {
        self.session
            .execute_unpaged(statement, values)
            .await
            .map_err(classify)
    }
}

type OrderColumns = (
    i64,
    Option<i64>,
    Option<String>,
    Option<String>,
    Option<i64>,
    Option<String>,
    Option<i64>,
);
type ItemColumns = (
    i64,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<i32>,
    Option<i64>,
);

/// Missing cells (a row written only in part) read as empty, so `verify` reports a
/// difference instead of failing.
fn order_from_columns(c: OrderColumns) -> OrderRow {
    OrderRow {
        order_id: c.0 as u64,
        client_id: c.1.unwrap_or(0) as u64,
        customer: c.2.unwrap_or_default(),
        address: c.3.unwrap_or_default(),
        created_at_ms: c.4.unwrap_or(0),
        status: c
            .5
            .as_deref()
            .and_then(OrderStatus::parse)
            .unwrap_or(OrderStatus::Pending),
        subtotal_cents: c.6.unwrap_or(0),
    }
}

fn item_from_columns(c: ItemColumns) -> LineItem {
    LineItem {
        line_item_id: c.0 as u64,
        product: c.1.unwrap_or_default(),
        colour: c.2.unwrap_or_default(),
        size: c.3.unwrap_or_default(),
        quantity: c.4.unwrap_or(0) as u32,
        unit_price_cents: c.5.unwrap_or(0),
    }
}

fn with_items(row: OrderRow, items: Vec<LineItem>) -> Order {
    super::sql::order_from(row, items)
}

impl super::Database for CassandraStore {
    async fn setup(&self) -> Result<(), DbError> {
        let ks = &self.keyspace;
        let ddl = [
            format!("DROP KEYSPACE IF EXISTS {ks}"),
            format!(
                "CREATE KEYSPACE {ks} WITH replication = {}",
                self.replication
            ),
        ]
        .into_iter()
        .chain(self.table_ddl());
        for statement in ddl {
            self.session
                .query_unpaged(statement.as_str(), ())
                .await
                .map_err(|e| DbError::new(classify(e).kind, format!("`{statement}` failed")))?;
        }
        Ok(())
    }

    async fn create_order(&self, order: &Order) -> Result<(), DbError> {
        let p = self.statements().await?;
        let mut order_values = vec![
            big(order.order_id),
            big(order.client_id),
            text(&order.customer),
            text(&order.address),
            CqlValue::BigInt(order.created_at_ms),
            text(order.status.as_str()),
            CqlValue::BigInt(order.subtotal_cents),
        ];
        if self.schema == Schema::ByItem {
            order_values.push(CqlValue::List(
                order.items.iter().map(|i| big(i.line_item_id)).collect(),
            ));
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
        match self.schema {
            Schema::ByOrder => {
                let (order, items) = tokio::try_join!(
                    self.run(&p.select_order, vec![big(order_id)]),
                    self.run(&p.select_items, vec![big(order_id)]),
                )?;
                let Some(columns) = order
                    .into_rows_result()
                    .map_err(other)?
                    .maybe_first_row::<OrderColumns>()
                    .map_err(other)?
                else {
                    return Ok(None);
                };
                let items = items
                    .into_rows_result()
                    .map_err(other)?
                    .rows::<ItemColumns>()
                    .map_err(other)?
                    .map(|r| r.map(item_from_columns))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(other)?;
                Ok(Some(with_items(order_from_columns(columns), items)))
            }
            Schema::ByItem => {
                let result = self.run(&p.select_order, vec![big(order_id)]).await?;
                let Some((id, client, customer, address, created, status, subtotal, ids)) = result
                    .into_rows_result()
                    .map_err(other)?
                    .maybe_first_row::<(
                        i64,
                        Option<i64>,
                        Option<String>,
                        Option<String>,
                        Option<i64>,
                        Option<String>,
                        Option<i64>,
                        Option<Vec<i64>>,
                    )>()
                    .map_err(other)?
                else {
                    return Ok(None);
                };
                let row =
                    order_from_columns((id, client, customer, address, created, status, subtotal));
                let results = try_join_all(
                    ids.unwrap_or_default()
                        .into_iter()
                        .map(|item_id| self.run(&p.select_items, vec![CqlValue::BigInt(item_id)])),
                )
                .await?;
                let mut items = Vec::with_capacity(results.len());
                for result in results {
                    let rows = result.into_rows_result().map_err(other)?;
                    if let Some(columns) = rows.maybe_first_row::<ItemColumns>().map_err(other)? {
                        items.push(item_from_columns(columns));
                    }
                }
                items.sort_by_key(|i| i.line_item_id);
                Ok(Some(with_items(row, items)))
            }
        }
    }

    async fn update_order(
        &self,
        order_id: OrderId,
        changes: &[ItemChange],
        subtotal_cents: i64,
    ) -> Result<Applied, DbError> {
        let p = self.statements().await?;
        let mut writes = Vec::with_capacity(changes.len() + 1);
        for change in changes {
            let mut values = vec![
                text(&change.colour),
                text(&change.size),
                CqlValue::Int(change.quantity as i32),
            ];
            if self.schema == Schema::ByOrder {
                values.push(big(order_id));
            }
            values.push(big(change.line_item_id));
            writes.push((&p.update_item, values));
        }
        writes.push((
            &p.update_subtotal,
            vec![CqlValue::BigInt(subtotal_cents), big(order_id)],
        ));
        self.write_all(writes).await?;
        // A CQL UPDATE is an upsert: it cannot tell whether the order was there.
        Ok(Applied::Unknown)
    }

    async fn update_status(
        &self,
        order_id: OrderId,
        status: OrderStatus,
    ) -> Result<Applied, DbError> {
        let p = self.statements().await?;
        let result = self
            .run(&p.update_status, vec![text(status.as_str()), big(order_id)])
            .await?;
        if !self.lwt {
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
        match self.schema {
            Schema::ByOrder => writes.push((&p.delete_items, vec![big(order_id)])),
            Schema::ByItem => {
                // The naive design has to read the order to find its items.
                let result = self.run(&p.select_order, vec![big(order_id)]).await?;
                let ids = result
                    .into_rows_result()
                    .map_err(other)?
                    .maybe_first_row::<(
                        i64,
                        Option<i64>,
                        Option<String>,
                        Option<String>,
                        Option<i64>,
                        Option<String>,
                        Option<i64>,
                        Option<Vec<i64>>,
                    )>()
                    .map_err(other)?
                    .and_then(|row| row.7)
                    .unwrap_or_default();
                for id in ids {
                    writes.push((&p.delete_items, vec![CqlValue::BigInt(id)]));
                }
            }
        }
        writes.push((&p.delete_order, vec![big(order_id)]));
        self.write_all(writes).await?;
        Ok(Applied::Unknown)
    }

    async fn snapshot(&self) -> Result<Snapshot, DbError> {
        let ks = &self.keyspace;
        let order_query = format!(
            "SELECT order_id, client_id, customer, address, created_at_ms, status, subtotal_cents FROM {ks}.orders"
        );
        let mut snapshot = Snapshot::default();
        let mut orders = self
            .session
            .query_iter(order_query.as_str(), ())
            .await
            .map_err(other)?
            .rows_stream::<OrderColumns>()
            .map_err(other)?;
        while let Some(columns) = orders.try_next().await.map_err(other)? {
            snapshot.orders.push(order_from_columns(columns));
        }
        let item_table = match self.schema {
            Schema::ByOrder => "line_items_by_order",
            Schema::ByItem => "line_items",
        };
        let item_query = format!(
            "SELECT line_item_id, product, colour, size, quantity, unit_price_cents, order_id FROM {ks}.{item_table}"
        );
        let mut items = self
            .session
            .query_iter(item_query.as_str(), ())
            .await
            .map_err(other)?
            .rows_stream::<(
                i64,
                Option<String>,
                Option<String>,
                Option<String>,
                Option<i32>,
                Option<i64>,
                Option<i64>,
            )>()
            .map_err(other)?;
        while let Some((id, product, colour, size, quantity, price, order_id)) =
            items.try_next().await.map_err(other)?
        {
            let item = item_from_columns((id, product, colour, size, quantity, price));
            snapshot.items.push((order_id.unwrap_or(0) as u64, item));
        }
        snapshot.orders.sort_by_key(|o| o.order_id);
        Ok(snapshot)
    }

    fn info(&self) -> StoreInfo {
        let schema = match self.schema {
            Schema::ByOrder => "by-order",
            Schema::ByItem => "by-item",
        };
        let batch = match self.batch {
            BatchMode::Logged => "logged",
            BatchMode::Unlogged => "unlogged",
            BatchMode::None => "none",
        };
        StoreInfo {
            name: "cassandra".into(),
            server_version: self.version.clone(),
            settings: BTreeMap::from([
                ("keyspace".to_string(), self.keyspace.clone()),
                ("replication".to_string(), self.replication.clone()),
                (
                    "read_cl".to_string(),
                    consistency_name(self.read_cl).to_string(),
                ),
                (
                    "write_cl".to_string(),
                    consistency_name(self.write_cl).to_string(),
                ),
                ("schema".to_string(), schema.to_string()),
                ("batch".to_string(), batch.to_string()),
                ("lwt".to_string(), self.lwt.to_string()),
                ("prepared".to_string(), "true".to_string()),
            ]),
        }
    }
}
