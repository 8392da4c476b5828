//! Reading hatshop's keys back for verify: every order and item hash a page of keys
//! at a time, and the records a SCAN batch at a time; and SCAN itself, which setup and
//! the bulk load's check use too.

use super::RedisStore;
use super::errors::classify;
use super::rows::{line_item, order_row};
use crate::db::{DbError, KV_PAGE, KvPage, Snapshot};

impl RedisStore {
    /// Every key matching `pattern`, by SCAN (never KEYS, which blocks the server).
    pub(super) async fn scan(&self, pattern: &str) -> Result<Vec<String>, DbError> {
        let mut held = self.conn().await?;
        scan(&mut held.conn, pattern).await
    }

    /// Every order and item, for verify.
    pub(super) async fn read_back(&self) -> Result<Snapshot, DbError> {
        let order_keys: Vec<String> = self
            .scan("hatshop:order:*")
            .await?
            .into_iter()
            .filter(|k| !k.ends_with(":items"))
            .collect();
        let mut snapshot = Snapshot::default();
        self.each_hash(&order_keys, |key, flat| {
            if let Some(id) = key.rsplit(':').next().and_then(|id| id.parse().ok()) {
                snapshot.orders.push(order_row(id, flat));
            }
        })
        .await?;
        snapshot.orders.sort_by_key(|o| o.order_id);
        let item_keys = self.scan("hatshop:item:*").await?;
        self.each_hash(&item_keys, |key, flat| {
            if let Some(id) = key.rsplit(':').next().and_then(|id| id.parse().ok()) {
                snapshot.items.push(line_item(id, flat));
            }
        })
        .await?;
        Ok(snapshot)
    }

    /// A page of the records, for verify: SCAN's next batch of keys and their values.
    pub(super) async fn kv_page_from(&self, cursor: Option<Vec<u8>>) -> Result<KvPage, DbError> {
        let from: u64 = cursor
            .and_then(|c| String::from_utf8(c).ok())
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        let mut held = self.conn().await?;
        let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
            .arg(from)
            .arg("MATCH")
            .arg("hatshop:kv:*")
            .arg("COUNT")
            .arg(KV_PAGE)
            .query_async(&mut held.conn)
            .await
            .map_err(classify)?;
        let values: Vec<Option<Vec<u8>>> = if keys.is_empty() {
            Vec::new()
        } else {
            redis::cmd("MGET")
                .arg(&keys)
                .query_async(&mut held.conn)
                .await
                .map_err(classify)?
        };
        let records = keys
            .into_iter()
            .zip(values)
            .filter_map(|(k, v)| Some((k.strip_prefix("hatshop:kv:")?.to_string(), v?)))
            .collect();
        Ok(KvPage {
            records,
            next: (next != 0).then(|| next.to_string().into_bytes()),
        })
    }

    /// Each key's hash, handed to `take` a page at a time, so the client holds one
    /// page of hashes (an order's payload with it) at a time, never all.
    async fn each_hash(
        &self,
        keys: &[String],
        mut take: impl FnMut(&str, &[String]),
    ) -> Result<(), DbError> {
        let mut held = self.conn().await?;
        for chunk in keys.chunks(KV_PAGE) {
            let mut pipe = redis::pipe();
            for key in chunk {
                pipe.cmd("HGETALL").arg(key);
            }
            let batch: Vec<Vec<String>> =
                pipe.query_async(&mut held.conn).await.map_err(classify)?;
            for (key, flat) in chunk.iter().zip(&batch) {
                take(key, flat);
            }
        }
        Ok(())
    }
}

/// Every key matching `pattern` on `conn`, by SCAN (never KEYS, which blocks the
/// server), sorted.
pub(super) async fn scan(
    conn: &mut impl redis::aio::ConnectionLike,
    pattern: &str,
) -> Result<Vec<String>, DbError> {
    let mut cursor: u64 = 0;
    let mut keys = Vec::new();
    loop {
        let (next, batch): (u64, Vec<String>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(pattern)
            .arg("COUNT")
            .arg(1000)
            .query_async(conn)
            .await
            .map_err(classify)?;
        keys.extend(batch);
        cursor = next;
        if cursor == 0 {
            break;
        }
    }
    keys.sort_unstable();
    keys.dedup();
    Ok(keys)
}
