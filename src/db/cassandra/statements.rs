//! The CQL of each schema variant: the tables, and every statement prepared once with
//! its consistency level (reads at `read_cl`, writes at `write_cl`).

use scylla::client::execution_profile::ExecutionProfileHandle;
use scylla::client::session::Session;
use scylla::statement::Consistency;
use scylla::statement::prepared::PreparedStatement;

use super::options::{CassandraOptions, Schema};
use crate::db::ownership::MARKER;
use crate::db::{DbError, KV_PAGE};

pub(super) const ORDER_COLUMNS: &str =
    "order_id, client_id, customer, address, created_at_ms, status, subtotal_cents, payload";
pub(super) const ITEM_COLUMNS: &str =
    "line_item_id, product, colour, size, quantity, unit_price_cents";

/// The tables of a schema variant, the key-value table and the marker.
pub fn table_ddl(ks: &str, schema: Schema) -> Vec<String> {
    let orders = "order_id bigint PRIMARY KEY, client_id bigint, customer text, address text, \
                  created_at_ms bigint, status text, subtotal_cents bigint, payload text";
    let items = "product text, colour text, size text, quantity int, unit_price_cents bigint";
    let mut ddl = match schema {
        Schema::ByOrder => vec![
            format!("CREATE TABLE {ks}.orders ({orders})"),
            format!(
                "CREATE TABLE {ks}.line_items_by_order (order_id bigint, line_item_id bigint, \
                 {items}, PRIMARY KEY (order_id, line_item_id))"
            ),
        ],
        Schema::ByItem => vec![
            format!("CREATE TABLE {ks}.orders ({orders}, line_item_ids list<bigint>)"),
            format!(
                "CREATE TABLE {ks}.line_items (line_item_id bigint PRIMARY KEY, order_id bigint, \
                 {items})"
            ),
        ],
    };
    ddl.push(format!("CREATE TABLE {ks}.kv (k text PRIMARY KEY, v blob)"));
    ddl.push(format!(
        "CREATE TABLE {ks}.{MARKER} (name text PRIMARY KEY, made_by text)"
    ));
    ddl
}

/// The statements of one schema, prepared with their consistency levels.
pub struct Prepared {
    pub insert_order: PreparedStatement,
    pub insert_item: PreparedStatement,
    pub select_order: PreparedStatement,
    /// by-order: the items of an order; by-item: one item by id.
    pub select_items: PreparedStatement,
    pub update_order: PreparedStatement,
    pub update_item: PreparedStatement,
    pub update_subtotal: PreparedStatement,
    pub update_status: PreparedStatement,
    pub delete_order: PreparedStatement,
    /// by-order: the order's item partition; by-item: one item by id.
    pub delete_items: PreparedStatement,
    /// An upsert: CQL cannot tell a write from a rewrite without a lightweight transaction.
    pub kv_put: PreparedStatement,
    pub kv_get: PreparedStatement,
    pub kv_delete: PreparedStatement,
    /// Every record, a page at a time (for verify).
    pub kv_scan: PreparedStatement,
}

/// The text of each statement; `Prepared::new` prepares them.
struct Cql {
    insert_order: String,
    insert_item: String,
    select_order: String,
    select_items: String,
    update_item: String,
    delete_items: String,
}

impl Cql {
    fn new(ks: &str, schema: Schema) -> Cql {
        let values = |n: usize| vec!["?"; n].join(", ");
        match schema {
            Schema::ByOrder => Cql {
                insert_order: format!(
                    "INSERT INTO {ks}.orders ({ORDER_COLUMNS}) VALUES ({})",
                    values(8)
                ),
                insert_item: format!(
                    "INSERT INTO {ks}.line_items_by_order (order_id, {ITEM_COLUMNS}) VALUES ({})",
                    values(7)
                ),
                select_order: format!("SELECT {ORDER_COLUMNS} FROM {ks}.orders WHERE order_id = ?"),
                select_items: format!(
                    "SELECT {ITEM_COLUMNS} FROM {ks}.line_items_by_order WHERE order_id = ?"
                ),
                update_item: format!(
                    "UPDATE {ks}.line_items_by_order SET colour = ?, size = ?, quantity = ? \
                     WHERE order_id = ? AND line_item_id = ?"
                ),
                delete_items: format!("DELETE FROM {ks}.line_items_by_order WHERE order_id = ?"),
            },
            Schema::ByItem => Cql {
                insert_order: format!(
                    "INSERT INTO {ks}.orders ({ORDER_COLUMNS}, line_item_ids) VALUES ({})",
                    values(9)
                ),
                insert_item: format!(
                    "INSERT INTO {ks}.line_items (order_id, {ITEM_COLUMNS}) VALUES ({})",
                    values(7)
                ),
                select_order: format!(
                    "SELECT {ORDER_COLUMNS}, line_item_ids FROM {ks}.orders WHERE order_id = ?"
                ),
                select_items: format!(
                    "SELECT {ITEM_COLUMNS} FROM {ks}.line_items WHERE line_item_id = ?"
                ),
                update_item: format!(
                    "UPDATE {ks}.line_items SET colour = ?, size = ?, quantity = ? \
                     WHERE line_item_id = ?"
                ),
                delete_items: format!("DELETE FROM {ks}.line_items WHERE line_item_id = ?"),
            },
        }
    }
}

async fn prepare(
    session: &Session,
    cql: &str,
    consistency: Consistency,
    profile: &ExecutionProfileHandle,
) -> Result<PreparedStatement, DbError> {
    let mut statement = session.prepare(cql).await.map_err(|e| {
        let e = scylla::errors::ExecutionError::from(e);
        DbError::new(
            super::errors::classify_kind(&e),
            format!("cannot prepare `{cql}`: {e}"),
        )
    })?;
    statement.set_consistency(consistency);
    statement.set_execution_profile_handle(Some(profile.clone()));
    // Rows come back without their column metadata: the driver decodes them with what
    // it got when preparing (hatshop's statements name their columns, and the tables
    // do not change while they are used). Less for the server to send and the client
    // to parse on every read.
    statement.set_use_cached_result_metadata(true);
    Ok(statement)
}

impl Prepared {
    /// Prepares every statement a run uses, before it is timed.
    pub async fn new(
        session: &Session,
        ks: &str,
        options: &CassandraOptions,
        watched: &ExecutionProfileHandle,
    ) -> Result<Prepared, DbError> {
        let cql = Cql::new(ks, options.schema);
        let (r, w) = (options.read_cl, options.write_cl);
        let if_exists = if options.lwt { " IF EXISTS" } else { "" };
        let mut update_status = prepare(
            session,
            &format!("UPDATE {ks}.orders SET status = ? WHERE order_id = ?{if_exists}"),
            w,
            watched,
        )
        .await?;
        update_status.set_serial_consistency(Some(options.serial_cl));
        let mut kv_scan =
            prepare(session, &format!("SELECT k, v FROM {ks}.kv"), r, watched).await?;
        kv_scan.set_page_size(KV_PAGE as i32);
        // Read back by `verify`, outside any lane: the session's profile, its timeout.
        kv_scan.set_execution_profile_handle(None);
        Ok(Prepared {
            insert_order: prepare(session, &cql.insert_order, w, watched).await?,
            insert_item: prepare(session, &cql.insert_item, w, watched).await?,
            select_order: prepare(session, &cql.select_order, r, watched).await?,
            select_items: prepare(session, &cql.select_items, r, watched).await?,
            update_order: prepare(
                session,
                &format!(
                    "UPDATE {ks}.orders SET created_at_ms = ?, status = ?, subtotal_cents = ? \
                     WHERE order_id = ?"
                ),
                w,
                watched,
            )
            .await?,
            update_item: prepare(session, &cql.update_item, w, watched).await?,
            update_subtotal: prepare(
                session,
                &format!("UPDATE {ks}.orders SET subtotal_cents = ? WHERE order_id = ?"),
                w,
                watched,
            )
            .await?,
            update_status,
            delete_order: prepare(
                session,
                &format!("DELETE FROM {ks}.orders WHERE order_id = ?"),
                w,
                watched,
            )
            .await?,
            delete_items: prepare(session, &cql.delete_items, w, watched).await?,
            kv_put: prepare(
                session,
                &format!("INSERT INTO {ks}.kv (k, v) VALUES (?, ?)"),
                w,
                watched,
            )
            .await?,
            kv_get: prepare(
                session,
                &format!("SELECT v FROM {ks}.kv WHERE k = ?"),
                r,
                watched,
            )
            .await?,
            kv_delete: prepare(
                session,
                &format!("DELETE FROM {ks}.kv WHERE k = ?"),
                w,
                watched,
            )
            .await?,
            kv_scan,
        })
    }
}
