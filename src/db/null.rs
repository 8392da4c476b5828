//! `null://`: answers every call at once and keeps nothing. A run against it shows
//! the floor that hatshop itself adds: generation, lanes, timing, histograms, op log.

use std::collections::BTreeMap;

use super::{
    Applied, BulkLoad, ConnectOptions, DbError, DbUrl, DeclaredStore, ErrorKind, KvPage, LoadBatch,
    LoadError, LoadShape, Marker, Ownership, Snapshot, Store, StoreDeclarations, StoreFacts,
};
use crate::workload::{ItemsUpdate, KeyText, Order, OrderId, OrderUpdate, StatusUpdate};

/// A store that answers every call at once: it measures hatshop alone.
pub struct NullStore;

impl DeclaredStore for NullStore {
    const DECLARED: StoreDeclarations = StoreDeclarations {
        holds_data: false,
        ..StoreDeclarations::new(
            "null",
            "does nothing, at once: what hatshop itself costs",
            "null://",
            &[],
            |_| 1,
        )
    };

    async fn connect(url: &DbUrl, _options: &ConnectOptions) -> Result<Self, DbError> {
        if !url.location().is_empty() {
            return Err(DbError::new(
                ErrorKind::Other,
                "null:// takes no host or path",
            ));
        }
        Ok(NullStore)
    }
}

impl crate::db::DbTiming for NullStore {}

impl Store for NullStore {
    async fn setup(&self, _owner: &Ownership) -> Result<(), DbError> {
        Ok(())
    }

    async fn check_owned(&self) -> Result<Marker, DbError> {
        Ok(Marker::default())
    }

    /// Nothing is kept, so nothing is held for a later run to go on from.
    async fn holding(&self) -> Result<Option<String>, DbError> {
        Ok(None)
    }

    async fn write_holding(&self, _note: &str) -> Result<(), DbError> {
        Ok(())
    }

    async fn create_order(&self, _order: &Order, _payload: &str) -> Result<(), DbError> {
        Ok(())
    }

    async fn read_order(&self, _order_id: OrderId) -> Result<Option<Order>, DbError> {
        Ok(None)
    }

    async fn update_order(&self, _update: &OrderUpdate) -> Result<Applied, DbError> {
        Ok(Applied::Unknown)
    }

    async fn update_items(&self, _update: ItemsUpdate<'_>) -> Result<Applied, DbError> {
        Ok(Applied::Unknown)
    }

    async fn update_status(&self, _update: StatusUpdate) -> Result<Applied, DbError> {
        Ok(Applied::Unknown)
    }

    async fn delete_order(&self, _id: OrderId) -> Result<Applied, DbError> {
        Ok(Applied::Unknown)
    }

    async fn kv_write(&self, _key: &KeyText, _value: &[u8]) -> Result<(), DbError> {
        Ok(())
    }

    async fn kv_rewrite(&self, _key: &KeyText, _value: &[u8]) -> Result<Applied, DbError> {
        Ok(Applied::Unknown)
    }

    async fn kv_read(&self, _key: &KeyText) -> Result<Option<Vec<u8>>, DbError> {
        Ok(None)
    }

    async fn kv_delete(&self, _key: &KeyText) -> Result<Applied, DbError> {
        Ok(Applied::Unknown)
    }

    async fn snapshot(&self) -> Result<Snapshot, DbError> {
        Ok(Snapshot::default())
    }

    async fn kv_page(&self, _cursor: Option<Vec<u8>>) -> Result<KvPage, DbError> {
        Ok(KvPage::default())
    }

    fn facts(&self) -> StoreFacts {
        StoreFacts {
            name: Self::DECLARED.scheme.into(),
            server_version: format!("hatshop {}", env!("CARGO_PKG_VERSION")),
            settings: BTreeMap::new(),
        }
    }
}

/// Bulk loads go nowhere too: each batch answers at once.
impl BulkLoad for NullStore {
    async fn load_setup(&self, _shape: LoadShape) -> Result<(), DbError> {
        Ok(())
    }

    async fn load_batch(&self, _batch: &LoadBatch) -> Result<(), LoadError> {
        Ok(())
    }

    async fn load_count(&self) -> Result<u64, DbError> {
        Ok(0)
    }

    async fn load_read(&self, _key: &str) -> Result<Option<Vec<Vec<u8>>>, DbError> {
        Ok(None)
    }
}
