//! Project Voldemort over its protocol-buffers protocol (`pb0`), routed by hatshop as
//! upstream's Java client routes (the client the study used): the cluster and the
//! store's quorums are read from the servers' `metadata` store, keys go to their
//! replicas by the consistent-hash ring, reads wait for `required-reads` replicas and
//! writes for `required-writes`, and versions are vector clocks.
//!
//! Every write is what the Java client's `put(key, value)` does: read the key's
//! versions from the read quorum, then put over all of them (their clocks merged,
//! incremented on the master). Two writers that read the same version race; the loser
//! gets "obsolete version", counted as a `conflict`. A delete reads first too, and
//! deletes what it read. A key-value record is stored under its own key; an order is
//! one JSON value under `order:ID`, holding its items. hatshop owns the whole store
//! and marks it with the key `hatshop_meta`; setup truncates it on every node through
//! the admin protocol, and verify lists keys the same way.

mod admin;
mod clock;
mod conn;
mod order_value;
mod proto;
mod ring;
mod route;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use self::clock::{VectorClock, latest};
use self::conn::{NodeConns, NodeError};
use self::proto::{Op, Versioned};
use self::ring::Ring;
use self::route::Cluster;
use super::ownership::{self, MARKER, Marker, Ownership};
use super::{
    Applied, ConnectOptions, DbError, DbUrl, DeclaredStore, ErrorKind, KV_PAGE, KvPage, OrderRow,
    Snapshot, Store, StoreDeclarations, StoreFacts,
};
use crate::workload::{ItemsUpdate, KeyText, Order, OrderId, OrderUpdate, StatusUpdate};

const DEFAULT_PORT: u16 = 6666;
const ORDER_PREFIX: &[u8] = b"order:";
/// The key that notes what the store holds (`Store::holding`), beside the marker.
const HOLDING_KEY: &str = "hatshop_meta.holding";

/// Project Voldemort over its protocol-buffers wire, routed by hatshop as its client does.
pub struct VoldemortStore {
    cluster: Cluster,
    target: String,
    op_timeout: Duration,
    /// Every record key, sorted: listed once at verify's first page.
    listed: Mutex<Option<Arc<Vec<Vec<u8>>>>>,
}

impl DeclaredStore for VoldemortStore {
    const DECLARED: StoreDeclarations = StoreDeclarations {
        no_tls: Some(
            "Voldemort's protocol has no TLS (nor has its own Java client): reach it over a network you trust, or through a TLS tunnel such as stunnel",
        ),
        ..StoreDeclarations::new(
            "voldemort",
            "Project Voldemort, routed client-side like its Java client (`hatshop server start voldemort` builds and runs one)",
            "voldemort://127.0.0.1:6666/hatshop",
            &[],
            |_| 16,
        )
    };

    async fn connect(url: &DbUrl, options: &ConnectOptions) -> Result<Self, DbError> {
        let address = url
            .address(DEFAULT_PORT)
            .map_err(|e| DbError::new(ErrorKind::Connection, e))?;
        let store = address.name.clone().ok_or_else(|| {
            DbError::other(format!(
                "{url}: name the store, e.g. {}",
                Self::DECLARED.example
            ))
        })?;
        let (cluster_xml, stores_xml) = metadata(&address.hosts, options).await?;
        let quorums = ring::quorums(&stores_xml, &store).map_err(DbError::other)?;
        let ring = Ring::parse(&cluster_xml, quorums.replication).map_err(DbError::other)?;
        let nodes = ring
            .nodes
            .iter()
            .map(|n| {
                Arc::new(NodeConns::new(
                    n.id,
                    format!("{}:{}", n.host, n.socket_port),
                    format!("{}:{}", n.host, n.admin_port),
                    options.concurrency,
                    options.connect_timeout,
                    options.op_timeout,
                ))
            })
            .collect();
        Ok(VoldemortStore {
            cluster: Cluster {
                ring,
                quorums,
                nodes,
                store,
                background: Default::default(),
            },
            target: url.to_string(),
            op_timeout: options.op_timeout,
            listed: Mutex::new(None),
        })
    }
}

/// cluster.xml and stores.xml from the first of `hosts` that answers.
async fn metadata(
    hosts: &[(String, u16)],
    options: &ConnectOptions,
) -> Result<(String, String), DbError> {
    let mut failures = Vec::new();
    for (host, port) in hosts {
        let node = NodeConns::new(
            -1,
            format!("{host}:{port}"),
            String::new(),
            1,
            options.connect_timeout,
            options.op_timeout,
        );
        let fetch = |key: &'static str| {
            let node = &node;
            async move {
                let request = proto::request(Op::Get, "metadata", key.as_bytes(), None);
                let reply = node.call(Op::Get, key.as_bytes(), &request).await?;
                let value =
                    reply.versions.into_iter().next().ok_or_else(|| {
                        NodeError::Io(format!("the metadata store holds no {key}"))
                    })?;
                Ok::<_, NodeError>(String::from_utf8_lossy(&value.value).into_owned())
            }
        };
        match (fetch("cluster.xml").await, fetch("stores.xml").await) {
            (Ok(cluster), Ok(stores)) => return Ok((cluster, stores)),
            (Err(e), _) | (_, Err(e)) => failures.push(format!("{host}:{port}: {e}")),
        }
    }
    Err(DbError::new(
        ErrorKind::Connection,
        format!("no Voldemort node answered: {}", failures.join("; ")),
    ))
}

fn order_key(id: OrderId) -> Vec<u8> {
    format!("order:{id}").into_bytes()
}

fn corrupt(what: &str, e: impl std::fmt::Display) -> DbError {
    DbError::new(ErrorKind::WrongResult, format!("{what}: {e}"))
}

impl VoldemortStore {
    /// The key's current versions: the read quorum's, superseded ones dropped.
    async fn get(&self, key: &[u8]) -> Result<Vec<Versioned>, DbError> {
        let replies = self.cluster.read(Op::Get, key).await?;
        let all = replies.into_iter().flat_map(|r| r.versions).collect();
        Ok(latest(all, |v: &Versioned| &v.clock))
    }

    /// The key's value as the Java client resolves concurrent versions: the latest
    /// timestamp wins.
    async fn value(&self, key: &[u8]) -> Result<Option<Versioned>, DbError> {
        let versions = self.get(key).await?;
        Ok(versions.into_iter().max_by_key(|v| v.clock.timestamp()))
    }

    /// The clocks of the key's versions, merged: what a write supersedes.
    async fn current_clock(&self, key: &[u8]) -> Result<Option<VectorClock>, DbError> {
        let replies = self.cluster.read(Op::GetVersion, key).await?;
        Ok(replies
            .into_iter()
            .flat_map(|r| r.clocks)
            .reduce(|a, b| a.merged(&b)))
    }

    /// Puts `value` over whatever versions the key has (the Java client's put).
    async fn put(&self, key: &[u8], value: &[u8]) -> Result<(), DbError> {
        let clock = self.current_clock(key).await?.unwrap_or_default();
        self.cluster.put(key, value, &clock).await
    }

    /// The order, its payload's text and the clock of the versions read.
    async fn order(&self, id: OrderId) -> Result<Option<(Order, String, VectorClock)>, DbError> {
        let key = order_key(id);
        let versions = self.get(&key).await?;
        let clock = versions
            .iter()
            .map(|v| v.clock.clone())
            .reduce(|a, b| a.merged(&b));
        let Some(newest) = versions.into_iter().max_by_key(|v| v.clock.timestamp()) else {
            return Ok(None);
        };
        let (order, payload) = order_value::decode(&newest.value)?;
        Ok(Some((order, payload, clock.unwrap_or_default())))
    }

    /// Reads the order, changes it and puts it back over the versions read.
    async fn change_order(
        &self,
        id: OrderId,
        change: impl FnOnce(&mut Order),
    ) -> Result<Applied, DbError> {
        let Some((mut order, payload, clock)) = self.order(id).await? else {
            return Ok(Applied::NotFound);
        };
        change(&mut order);
        let value = order_value::encode(&order, &payload)?;
        self.cluster.put(&order_key(id), &value, &clock).await?;
        Ok(Applied::Yes)
    }

    async fn delete_key(&self, key: &[u8]) -> Result<Applied, DbError> {
        let versions = self.get(key).await?;
        let Some(clock) = versions
            .into_iter()
            .map(|v| v.clock)
            .reduce(|a, b| a.merged(&b))
        else {
            return Ok(Applied::NotFound);
        };
        self.cluster.delete(key, &clock).await?;
        Ok(Applied::Yes)
    }

    /// Every key of the store on every node, sorted, each once. Every node must answer:
    /// a key only a dead node holds would go unseen.
    async fn all_keys(&self, limit: Option<usize>) -> Result<Vec<Vec<u8>>, DbError> {
        let partitions: Vec<u32> = (0..self.cluster.ring.partitions() as u32).collect();
        let mut keys = Vec::new();
        for node in &self.cluster.nodes {
            let held = admin::keys(
                node,
                &self.cluster.store,
                &partitions,
                limit,
                self.op_timeout,
            )
            .await?;
            keys.extend(held);
        }
        keys.sort_unstable();
        keys.dedup();
        Ok(keys)
    }

    async fn marker_exists(&self) -> Result<bool, DbError> {
        Ok(!self.get(MARKER.as_bytes()).await?.is_empty())
    }

    /// The record keys (not orders, not the marker), listed on the first call.
    fn record_keys(&self) -> Option<Arc<Vec<Vec<u8>>>> {
        self.listed.lock().expect("listed lock").clone()
    }
}

/// No bulk loads: `hatshop load` says so before anything is sent.
impl crate::db::BulkLoad for VoldemortStore {}

impl crate::db::DbTiming for VoldemortStore {}

impl Store for VoldemortStore {
    async fn setup(&self, owner: &Ownership) -> Result<(), DbError> {
        let mut existing = Vec::new();
        if self.marker_exists().await? {
            existing.push(MARKER.to_string());
        } else if !self.all_keys(Some(1)).await?.is_empty() {
            existing.push(format!("the keys of store {}", self.cluster.store));
        }
        owner.may_drop(&self.target, &existing)?;
        for node in &self.cluster.nodes {
            admin::truncate(node, &self.cluster.store, self.op_timeout).await?;
        }
        self.put(MARKER.as_bytes(), owner.note.as_bytes()).await
    }

    async fn check_owned(&self) -> Result<Marker, DbError> {
        match self.value(MARKER.as_bytes()).await? {
            Some(marker) => Ok(Marker {
                made_by: String::from_utf8_lossy(&marker.value).into_owned(),
            }),
            None => Err(ownership::not_ours(&self.target)),
        }
    }

    async fn holding(&self) -> Result<Option<String>, DbError> {
        Ok(self
            .value(HOLDING_KEY.as_bytes())
            .await?
            .map(|note| String::from_utf8_lossy(&note.value).into_owned()))
    }

    async fn write_holding(&self, note: &str) -> Result<(), DbError> {
        self.put(HOLDING_KEY.as_bytes(), note.as_bytes()).await
    }

    async fn create_order(&self, order: &Order, payload: &str) -> Result<(), DbError> {
        let value = order_value::encode(order, payload)?;
        self.put(&order_key(order.order_id), &value).await
    }

    async fn read_order(&self, order_id: OrderId) -> Result<Option<Order>, DbError> {
        Ok(self.order(order_id).await?.map(|(order, _, _)| order))
    }

    async fn update_order(&self, update: &OrderUpdate) -> Result<Applied, DbError> {
        let order_id = update.order_id;
        self.change_order(order_id, |order| order.apply_update(update))
            .await
    }

    async fn update_items(&self, update: ItemsUpdate<'_>) -> Result<Applied, DbError> {
        let order_id = update.order_id;
        self.change_order(order_id, |order| {
            order.apply_item_changes(update.changes, update.subtotal_cents)
        })
        .await
    }

    async fn update_status(&self, update: StatusUpdate) -> Result<Applied, DbError> {
        let StatusUpdate { order_id, status } = update;
        self.change_order(order_id, |order| order.status = status)
            .await
    }

    async fn delete_order(&self, order_id: OrderId) -> Result<Applied, DbError> {
        self.delete_key(&order_key(order_id)).await
    }

    async fn kv_write(&self, key: &KeyText, value: &[u8]) -> Result<(), DbError> {
        self.put(key.as_str().as_bytes(), value).await
    }

    async fn kv_rewrite(&self, key: &KeyText, value: &[u8]) -> Result<Applied, DbError> {
        let key = key.as_str().as_bytes();
        let Some(clock) = self.current_clock(key).await? else {
            return Ok(Applied::NotFound);
        };
        self.cluster.put(key, value, &clock).await?;
        Ok(Applied::Yes)
    }

    async fn kv_read(&self, key: &KeyText) -> Result<Option<Vec<u8>>, DbError> {
        Ok(self.value(key.as_str().as_bytes()).await?.map(|v| v.value))
    }

    async fn kv_delete(&self, key: &KeyText) -> Result<Applied, DbError> {
        self.delete_key(key.as_str().as_bytes()).await
    }

    async fn snapshot(&self) -> Result<Snapshot, DbError> {
        let mut snapshot = Snapshot::default();
        for key in self.all_keys(None).await? {
            let Some(id) = key.strip_prefix(ORDER_PREFIX) else {
                continue;
            };
            let id: OrderId = std::str::from_utf8(id)
                .ok()
                .and_then(|t| t.parse().ok())
                .ok_or_else(|| corrupt("an order key", String::from_utf8_lossy(&key)))?;
            let Some((order, _, _)) = self.order(id).await? else {
                continue;
            };
            for item in &order.items {
                snapshot.items.push((order.order_id, item.clone()));
            }
            snapshot.orders.push(OrderRow {
                order_id: order.order_id,
                client_id: order.client_id,
                customer: order.customer,
                address: order.address,
                created_at_ms: order.created_at_ms,
                status: order.status,
                subtotal_cents: order.subtotal_cents,
                payload: order.payload,
            });
        }
        Ok(snapshot)
    }

    async fn kv_page(&self, cursor: Option<Vec<u8>>) -> Result<KvPage, DbError> {
        let keys = match (self.record_keys(), &cursor) {
            (Some(keys), Some(_)) => keys,
            _ => {
                let mut keys = self.all_keys(None).await?;
                keys.retain(|k| {
                    !k.starts_with(ORDER_PREFIX)
                        && k != MARKER.as_bytes()
                        && k != HOLDING_KEY.as_bytes()
                });
                let keys = Arc::new(keys);
                *self.listed.lock().expect("listed lock") = Some(keys.clone());
                keys
            }
        };
        let start = match &cursor {
            Some(after) => keys.partition_point(|k| k <= after),
            None => 0,
        };
        let mut page = KvPage::default();
        for key in keys[start..].iter().take(KV_PAGE) {
            if let Some(found) = self.value(key).await? {
                page.records
                    .push((String::from_utf8_lossy(key).into_owned(), found.value));
            }
        }
        if start + KV_PAGE < keys.len() {
            page.next = Some(keys[start + KV_PAGE - 1].clone());
        }
        Ok(page)
    }

    async fn settle(&self) {
        self.cluster.background.settled().await;
    }

    fn facts(&self) -> StoreFacts {
        let q = self.cluster.quorums;
        let settings: BTreeMap<String, String> = [
            ("store", self.cluster.store.clone()),
            ("nodes", self.cluster.nodes.len().to_string()),
            ("replication_factor", q.replication.to_string()),
            ("required_reads", q.reads.to_string()),
            ("required_writes", q.writes.to_string()),
            ("routing", "client".to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        StoreFacts {
            name: Self::DECLARED.scheme.to_string(),
            server_version: "Project Voldemort".to_string(),
            settings,
        }
    }
}
