//! Reading the whole store back for verify: orders and items, and the key-value table
//! page by page, at a consistency level the caller picks.

use futures::TryStreamExt;
use scylla::response::{PagingState, PagingStateResponse};
use scylla::statement::{Consistency, Statement};

use super::CassandraStore;
use super::options::Schema;
use super::rows::{OrderColumns, classify, classify_pager, line_item, order_row, other};
use crate::db::{DbError, ErrorKind, KvPage, Snapshot};

impl CassandraStore {
    /// Every order and item, read at `consistency`.
    pub(super) async fn snapshot_at(&self, consistency: Consistency) -> Result<Snapshot, DbError> {
        let ks = &self.keyspace;
        let mut snapshot = Snapshot::default();
        let mut orders = self
            .session
            .query_iter(
                read_back(
                    format!(
                        "SELECT order_id, client_id, customer, address, created_at_ms, status, \
                         subtotal_cents FROM {ks}.orders"
                    ),
                    consistency,
                ),
                (),
            )
            .await
            .map_err(classify_pager)?
            .rows_stream::<OrderColumns>()
            .map_err(other)?;
        while let Some(columns) = orders.try_next().await.map_err(other)? {
            snapshot.orders.push(order_row(columns));
        }
        snapshot.orders.sort_by_key(|o| o.order_id);
        let item_table = match self.options.schema {
            Schema::ByOrder => "line_items_by_order",
            Schema::ByItem => "line_items",
        };
        let mut items = self
            .session
            .query_iter(
                read_back(
                    format!(
                        "SELECT line_item_id, product, colour, size, quantity, unit_price_cents, \
                         order_id FROM {ks}.{item_table}"
                    ),
                    consistency,
                ),
                (),
            )
            .await
            .map_err(classify_pager)?
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
            let item = line_item((id, product, colour, size, quantity, price));
            snapshot.items.push((order_id.unwrap_or(0) as u64, item));
        }
        Ok(snapshot)
    }

    /// A page of the key-value table read back at ALL, as the snapshot is; at QUORUM
    /// with a replica down.
    pub(super) async fn kv_page_read_back(
        &self,
        cursor: Option<Vec<u8>>,
    ) -> Result<KvPage, DbError> {
        let p = self.statements().await?;
        let paging = match cursor {
            Some(bytes) => PagingState::new_from_raw_bytes(bytes),
            None => PagingState::start(),
        };
        // Read back at ALL, as the snapshot is; QUORUM with a replica down.
        let mut scan = p.kv_scan.clone();
        scan.set_consistency(Consistency::All);
        let (result, response) = match self
            .session
            .execute_single_page(&scan, (), paging.clone())
            .await
            .map_err(classify)
        {
            Err(e) if e.kind == ErrorKind::Unavailable => {
                scan.set_consistency(Consistency::Quorum);
                self.session
                    .execute_single_page(&scan, (), paging)
                    .await
                    .map_err(classify)?
            }
            result => result?,
        };
        let records = result
            .into_rows_result()
            .map_err(other)?
            .rows::<(String, Option<Vec<u8>>)>()
            .map_err(other)?
            .map(|r| r.map(|(k, v)| (k, v.unwrap_or_default())))
            .collect::<Result<Vec<_>, _>>()
            .map_err(other)?;
        let next = match response {
            PagingStateResponse::HasMorePages { state } => {
                state.as_bytes_slice().map(|bytes| bytes.to_vec())
            }
            PagingStateResponse::NoMorePages => None,
        };
        Ok(KvPage { records, next })
    }
}

/// A whole-table read at `consistency`.
fn read_back(cql: String, consistency: Consistency) -> Statement {
    let mut statement = Statement::new(cql);
    statement.set_consistency(consistency);
    statement
}
