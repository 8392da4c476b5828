//! Reading the whole store back for verify: orders and items, and the key-value table
//! page by page, at a consistency level the caller picks.

use futures::TryStreamExt;
use scylla::client::pager::TypedRowStream;
use scylla::deserialize::row::DeserializeRow;
use scylla::response::{PagingState, PagingStateResponse};
use scylla::statement::{Consistency, Statement};

use super::CassandraStore;
use super::columns::OrderItem;
use super::errors::{classify, classify_pager, other};
use super::options::Schema;
use super::statements::{ITEM_COLUMNS, ORDER_COLUMNS};
use crate::db::{DbError, ErrorKind, KvPage, OrderRow, Snapshot};

impl CassandraStore {
    /// Every order and item, read at `consistency`.
    pub(super) async fn snapshot_at(&self, consistency: Consistency) -> Result<Snapshot, DbError> {
        let ks = &self.keyspace;
        let mut snapshot = Snapshot::default();
        let orders = format!("SELECT {ORDER_COLUMNS} FROM {ks}.orders");
        let mut orders = self.scan::<OrderRow>(orders, consistency).await?;
        while let Some(row) = orders.try_next().await.map_err(other)? {
            snapshot.orders.push(row);
        }
        snapshot.orders.sort_by_key(|o| o.order_id);
        let item_table = match self.options.schema {
            Schema::ByOrder => "line_items_by_order",
            Schema::ByItem => "line_items",
        };
        let items = format!("SELECT {ITEM_COLUMNS}, order_id FROM {ks}.{item_table}");
        let mut items = self.scan::<OrderItem>(items, consistency).await?;
        while let Some(OrderItem { order_id, item }) = items.try_next().await.map_err(other)? {
            snapshot.items.push((order_id, item));
        }
        Ok(snapshot)
    }

    /// Every row a query selects, page by page, at `consistency`.
    async fn scan<R: for<'f, 'm> DeserializeRow<'f, 'm>>(
        &self,
        cql: String,
        consistency: Consistency,
    ) -> Result<TypedRowStream<R>, DbError> {
        self.session
            .query_iter(read_back(cql, consistency), ())
            .await
            .map_err(classify_pager)?
            .rows_stream::<R>()
            .map_err(other)
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
