//! `null://`: answers every call at once and keeps nothing. A run against it shows
//! the floor that hatshop itself adds: generation, lanes, timing, histograms, op log.

use std::collections::BTreeMap;

use super::{Applied, Database, DbError, Snapshot, StoreInfo};
use crate::workload::{ItemChange, Order, OrderId, OrderStatus};

pub struct NullStore;

impl Database for NullStore {
    async fn setup(&self) -> Result<(), DbError> {
        Ok(())
    }

    async fn create_order(&self, _order: &Order) -> Result<(), DbError> {
        Ok(())
    }

    async fn read_order(&self, _order_id: OrderId) -> Result<Option<Order>, DbError> {
        Ok(None)
    }

    async fn update_order(
        &self,
        _order_id: OrderId,
        _changes: &[ItemChange],
        _subtotal_cents: i64,
    ) -> Result<Applied, DbError> {
        Ok(Applied::Unknown)
    }

    async fn update_status(
        &self,
        _order_id: OrderId,
        _status: OrderStatus,
    ) -> Result<Applied, DbError> {
        Ok(Applied::Unknown)
    }

    async fn delete_order(&self, _order_id: OrderId) -> Result<Applied, DbError> {
        Ok(Applied::Unknown)
    }

    async fn snapshot(&self) -> Result<Snapshot, DbError> {
        Ok(Snapshot::default())
    }

    fn info(&self) -> StoreInfo {
        StoreInfo {
            name: "null".into(),
            server_version: env!("CARGO_PKG_VERSION").into(),
            settings: BTreeMap::new(),
        }
    }

    fn holds_data(&self) -> bool {
        false
    }
}
