//! Where a key lives: the cluster's nodes and partitions (`cluster.xml`), a store's
//! replication and quorums (`stores.xml`), both read from the servers' `metadata`
//! store, and upstream's consistent routing: a 32-bit FNV hash of the key, its absolute value
//! modulo the partition count for the master partition, then clockwise to the next
//! partitions on distinct nodes until there are `replication` of them.

/// One node as cluster.xml names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeInfo {
    pub id: i32,
    pub host: String,
    pub socket_port: u16,
    pub admin_port: u16,
}

/// A store's replication factor and quorums.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quorums {
    pub replication: usize,
    pub reads: usize,
    pub writes: usize,
}

/// The cluster's partitions, who owns each, and how many replicas a key has.
#[derive(Debug, Clone)]
pub struct Ring {
    pub nodes: Vec<NodeInfo>,
    /// The index in `nodes` of each partition's owner, by partition id.
    partition_owner: Vec<usize>,
    replication: usize,
}

impl Ring {
    /// The ring of `cluster_xml`, replicating `replication` times.
    pub fn parse(cluster_xml: &str, replication: usize) -> Result<Ring, String> {
        let mut nodes = Vec::new();
        let mut owners: Vec<(u32, usize)> = Vec::new();
        for server in blocks(cluster_xml, "server") {
            let field = |tag: &str| {
                text(server, tag).ok_or_else(|| format!("cluster.xml: a server without <{tag}>"))
            };
            let number = |tag: &str| -> Result<i64, String> {
                field(tag)?
                    .parse()
                    .map_err(|_| format!("cluster.xml: <{tag}> is not a number"))
            };
            let node = NodeInfo {
                id: number("id")? as i32,
                host: field("host")?.to_string(),
                socket_port: number("socket-port")? as u16,
                admin_port: match text(server, "admin-port") {
                    Some(_) => number("admin-port")? as u16,
                    None => number("socket-port")? as u16 + 1,
                },
            };
            for partition in field("partitions")?.split(',').map(str::trim) {
                if partition.is_empty() {
                    continue;
                }
                let id: u32 = partition
                    .parse()
                    .map_err(|_| format!("cluster.xml: partition '{partition}'"))?;
                owners.push((id, nodes.len()));
            }
            nodes.push(node);
        }
        if nodes.is_empty() {
            return Err("cluster.xml names no server".into());
        }
        owners.sort_unstable();
        if owners
            .iter()
            .enumerate()
            .any(|(i, &(p, _))| p as usize != i)
        {
            return Err("cluster.xml: partition ids are not 0, 1, 2, … each once".into());
        }
        if replication > nodes.len() {
            return Err(format!(
                "the store replicates {replication} times but the cluster has {} nodes",
                nodes.len()
            ));
        }
        Ok(Ring {
            nodes,
            partition_owner: owners.into_iter().map(|(_, n)| n).collect(),
            replication,
        })
    }

    /// Partitions in the ring.
    pub fn partitions(&self) -> usize {
        self.partition_owner.len()
    }

    /// The replicas of `key`, master first, as indexes into `nodes`.
    pub fn route(&self, key: &[u8]) -> Vec<usize> {
        let count = self.partition_owner.len();
        let mut index = abs(fnv(key)) as usize % count;
        let mut replicas = Vec::with_capacity(self.replication);
        for _ in 0..count {
            let owner = self.partition_owner[index];
            if !replicas.contains(&owner) {
                replicas.push(owner);
                if replicas.len() == self.replication {
                    break;
                }
            }
            index = (index + 1) % count;
        }
        replicas
    }
}

/// upstream's `FnvHashFunction.hash`: 32-bit FNV, xor then multiply (the FNV-1a order,
/// though upstream calls it FNV).
fn fnv(key: &[u8]) -> i32 {
    let mut hash: u32 = 0x811c_9dc5;
    for &byte in key {
        hash ^= u32::from(byte);
        hash = hash.wrapping_mul((1 << 24) + 0x193);
    }
    hash as i32
}

/// upstream's abs: never negative, `i32::MIN` becomes `i32::MAX`.
fn abs(value: i32) -> i32 {
    value.checked_abs().unwrap_or(i32::MAX)
}

/// The quorums of `store` in `stores_xml`.
pub fn quorums(stores_xml: &str, store: &str) -> Result<Quorums, String> {
    let def = blocks(stores_xml, "store")
        .into_iter()
        .find(|b| text(b, "name") == Some(store))
        .ok_or_else(|| format!("the cluster has no store named '{store}'"))?;
    if let Some(strategy) = text(def, "routing-strategy")
        && strategy != "consistent-routing"
    {
        return Err(format!(
            "store '{store}' routes by {strategy}; hatshop routes consistent-routing stores only"
        ));
    }
    let number = |tag: &str| -> Result<usize, String> {
        text(def, tag)
            .ok_or_else(|| format!("store '{store}' has no <{tag}>"))?
            .parse()
            .map_err(|_| format!("store '{store}': <{tag}> is not a number"))
    };
    Ok(Quorums {
        replication: number("replication-factor")?,
        reads: number("required-reads")?,
        writes: number("required-writes")?,
    })
}

/// The insides of every `<tag>…</tag>` (not nested in one another).
fn blocks<'a>(xml: &'a str, tag: &str) -> Vec<&'a str> {
    let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
    let mut out = Vec::new();
    let mut rest = xml;
    while let Some(start) = rest.find(&open) {
        let inner = &rest[start + open.len()..];
        let Some(end) = inner.find(&close) else { break };
        out.push(&inner[..end]);
        rest = &inner[end + close.len()..];
    }
    out
}

/// The trimmed text of the first `<tag>…</tag>` in `xml`.
fn text<'a>(xml: &'a str, tag: &str) -> Option<&'a str> {
    blocks(xml, tag).first().map(|t| t.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLUSTER: &str = "<cluster><name>c</name>
        <server><id>0</id><host>127.0.0.1</host><http-port>1</http-port>
          <socket-port>6666</socket-port><admin-port>6667</admin-port><partitions>0, 3</partitions></server>
        <server><id>1</id><host>127.0.0.1</host><http-port>1</http-port>
          <socket-port>6676</socket-port><admin-port>6677</admin-port><partitions>1, 4</partitions></server>
        <server><id>2</id><host>127.0.0.1</host><http-port>1</http-port>
          <socket-port>6686</socket-port><partitions>2, 5</partitions></server>
        </cluster>";

    #[test]
    fn fnv_matches_upstream() {
        // The published FNV-1a 32-bit vectors, which upstream's loop computes.
        assert_eq!(fnv(b""), 0x811c9dc5_u32 as i32);
        assert_eq!(fnv(b"a"), 0xe40c292c_u32 as i32);
        assert_eq!(fnv(b"foobar"), 0xbf9cf968_u32 as i32);
    }

    #[test]
    fn keys_route_clockwise_to_distinct_nodes() {
        let ring = Ring::parse(CLUSTER, 2).unwrap();
        assert_eq!(ring.partitions(), 6);
        assert_eq!(ring.nodes[2].admin_port, 6687, "default: socket port + 1");
        for key in [&b"a"[..], b"foobar", b"user0000000000000001", b""] {
            let replicas = ring.route(key);
            let master = abs(fnv(key)) as usize % 6;
            assert_eq!(replicas, vec![master % 3, (master + 1) % 3], "{key:?}");
        }
        assert!(Ring::parse(CLUSTER, 4).is_err());
    }

    #[test]
    fn quorums_come_from_the_named_store() {
        let stores = "<stores><store><name>other</name><replication-factor>1</replication-factor>\
            </store><store><name>hatshop</name><routing-strategy>consistent-routing</routing-strategy>\
            <replication-factor>3</replication-factor><required-reads>2</required-reads>\
            <required-writes>2</required-writes></store></stores>";
        let q = quorums(stores, "hatshop").unwrap();
        assert_eq!(
            q,
            Quorums {
                replication: 3,
                reads: 2,
                writes: 2
            }
        );
        assert!(quorums(stores, "missing").is_err());
    }
}
