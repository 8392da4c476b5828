//! Reading hatshop's tables back for verify: the orders and items through a portal a
//! page at a time, so a read-back never holds a table's rows (and their payloads) at
//! once, and the records a page at a time in key order.

use tokio_postgres::Row;

use super::PostgresStore;
use super::errors::classify;
use super::rows::{get, line_item, order_row};
use crate::db::peer_table;
use crate::db::sql::{ITEM_COLUMNS, ORDER_COLUMNS};
use crate::db::{DbError, KV_PAGE, KvPage, Snapshot};

impl PostgresStore {
    /// Every order and item, for verify.
    pub(super) async fn read_back(&self) -> Result<Snapshot, DbError> {
        let mut conn = self.conn().await?;
        let tx = conn.client.transaction().await.map_err(classify)?;
        let mut snapshot = Snapshot::default();
        let orders = format!("SELECT {ORDER_COLUMNS} FROM orders ORDER BY order_id");
        each_row(&tx, &orders, |row| {
            snapshot.orders.push(order_row(row)?);
            Ok(())
        })
        .await?;
        let items = format!(
            "SELECT {ITEM_COLUMNS}, order_id FROM line_items ORDER BY order_id, line_item_id"
        );
        each_row(&tx, &items, |row| {
            let item = line_item(row, 0)?.expect("line_item_id is NOT NULL");
            snapshot.items.push((get::<i64>(row, 6)? as u64, item));
            Ok(())
        })
        .await?;
        Ok(snapshot)
    }

    /// The page of records after `cursor`, in key order, for verify.
    pub(super) async fn kv_page_from(&self, cursor: Option<Vec<u8>>) -> Result<KvPage, DbError> {
        let after = String::from_utf8(cursor.unwrap_or_default()).unwrap_or_default();
        let mut conn = self.conn().await?;
        let statement = conn.statement(&self.sql.kv_page).await?;
        let mut records = Vec::new();
        let mut last = None;
        if self.pgbench {
            // Aids are read in order; the cursor is the last one's number.
            let after: i32 = after.parse().unwrap_or(-1);
            let rows = conn.client.query(&statement, &[&after]).await;
            for row in &rows.map_err(classify)? {
                let aid: i32 = get(row, 0)?;
                records.push(peer_table::record(i64::from(aid), get(row, 1)?));
                last = Some(aid.to_string());
            }
        } else {
            let rows = conn.client.query(&statement, &[&after]).await;
            for row in &rows.map_err(classify)? {
                records.push((get::<String>(row, 0)?, get::<Vec<u8>>(row, 1)?));
            }
            last = records.last().map(|(k, _)| k.clone());
        }
        let next = (records.len() == KV_PAGE).then_some(last).flatten();
        Ok(KvPage {
            records,
            next: next.map(String::into_bytes),
        })
    }
}

/// Rows of a read-back, a page of the portal at a time.
const READ_BACK_PAGE: i32 = 1_000;

/// Hands each row `sql` selects to `take`, read through a portal a page at a time.
async fn each_row(
    tx: &tokio_postgres::Transaction<'_>,
    sql: &str,
    mut take: impl FnMut(&Row) -> Result<(), DbError>,
) -> Result<(), DbError> {
    let portal = tx.bind(sql, &[]).await.map_err(classify)?;
    loop {
        let rows = tx
            .query_portal(&portal, READ_BACK_PAGE)
            .await
            .map_err(classify)?;
        rows.iter().try_for_each(&mut take)?;
        if rows.len() < READ_BACK_PAGE as usize {
            return Ok(());
        }
    }
}
