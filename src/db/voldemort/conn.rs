//! Connections to one Voldemort node: `pb0` on its socket port, one request in flight
//! per connection. A key always uses the same connection of a node, taken in turn, so
//! two requests for one key reach the node in the order they were made (a put still
//! finishing in the background is not overtaken by the delete that follows it). A
//! connection that fails, or whose request is abandoned mid-way, is dropped and opened
//! again by the next request. A node that
//! fails is skipped by routing for a short while (upstream's failure detector bans a
//! node too), so a dead replica does not cost every request a refused connect.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use super::proto::{self, Op, Reply, ServerError};

/// How long a failed node is skipped before it is tried again.
const BAN: Duration = Duration::from_secs(1);
/// The largest response hatshop accepts (a value and its versions).
const MAX_FRAME: usize = 64 << 20;
/// Reads are buffered: a reply's length and body (a 15 KB value) usually come in one
/// read call, not two.
const READ_BUFFER: usize = 32 << 10;

/// A connection: reads buffered, writes sent as they are.
pub type Stream = BufReader<TcpStream>;

/// Why a request to one node got no answer.
#[derive(Debug, Clone)]
pub enum NodeError {
    /// Could not connect: nothing was sent.
    Refused(String),
    /// The connection broke: what was sent may have been applied.
    Io(String),
    Timeout,
    /// The node answered with an error.
    Server(ServerError),
}

impl std::fmt::Display for NodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NodeError::Refused(e) | NodeError::Io(e) => f.write_str(e),
            NodeError::Timeout => f.write_str("no answer in time"),
            NodeError::Server(e) => write!(f, "error {}: {}", e.code, e.message),
        }
    }
}

/// One node's address and its connections, a slot per key hash.
pub struct NodeConns {
    pub id: i32,
    pub address: String,
    pub admin_address: String,
    /// One connection per slot; a key hashes to its slot.
    slots: Vec<tokio::sync::Mutex<Option<Stream>>>,
    banned_until: Mutex<Option<Instant>>,
    connect_timeout: Duration,
    op_timeout: Duration,
}

impl NodeConns {
    /// A node with `slots` connections, none open yet.
    pub fn new(
        id: i32,
        address: String,
        admin_address: String,
        slots: usize,
        connect_timeout: Duration,
        op_timeout: Duration,
    ) -> NodeConns {
        NodeConns {
            id,
            address,
            admin_address,
            slots: (0..slots.max(1))
                .map(|_| tokio::sync::Mutex::new(None))
                .collect(),
            banned_until: Mutex::new(None),
            connect_timeout,
            op_timeout,
        }
    }

    /// Whether routing should skip this node for now.
    pub fn banned(&self) -> bool {
        let until = *self.banned_until.lock().expect("ban lock");
        until.is_some_and(|t| Instant::now() < t)
    }

    fn ban(&self) {
        *self.banned_until.lock().expect("ban lock") = Some(Instant::now() + BAN);
    }

    /// Sends one request for `key` and reads its reply. An error the node sent comes
    /// back as `NodeError::Server`.
    pub async fn call(&self, op: Op, key: &[u8], request: &[u8]) -> Result<Reply, NodeError> {
        let slot = &self.slots[slot_of(key, self.slots.len())];
        let exchange = async {
            let mut held = slot.lock().await;
            // Out of the slot while in use: a request abandoned mid-way (a timeout, a
            // cancelled run) drops its connection with it, and the next one opens anew.
            let mut stream = match held.take() {
                Some(stream) => stream,
                None => open(&self.address, b"pb0", self.connect_timeout).await?,
            };
            let body = exchange(&mut stream, request).await?;
            // A reply that cannot be read says the stream is out of step: the
            // connection goes with it.
            let reply = proto::reply(op, &body)
                .map_err(|e| NodeError::Io(format!("a reply hatshop cannot read ({e})")))?;
            *held = Some(stream);
            Ok::<_, NodeError>(reply)
        };
        let outcome = match tokio::time::timeout(self.op_timeout, exchange).await {
            Ok(outcome) => outcome,
            Err(_) => Err(NodeError::Timeout),
        };
        let reply = match outcome {
            Ok(reply) => reply,
            Err(e) => {
                self.ban();
                return Err(e);
            }
        };
        match reply.error {
            Some(error) => Err(NodeError::Server(error)),
            None => Ok(reply),
        }
    }
}

/// The slot (connection) of `key` among `slots`.
fn slot_of(key: &[u8], slots: usize) -> usize {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let mut hasher = DefaultHasher::new();
    key.hash(&mut hasher);
    (hasher.finish() % slots as u64) as usize
}

/// Connects and agrees on `protocol` (`pb0` for requests, `ad1` for admin).
pub async fn open(
    address: &str,
    protocol: &[u8; 3],
    timeout: Duration,
) -> Result<Stream, NodeError> {
    let handshake = async {
        let mut stream = TcpStream::connect(address)
            .await
            .map_err(|e| NodeError::Refused(format!("cannot connect to {address}: {e}")))?;
        stream.set_nodelay(true).ok();
        stream.write_all(protocol).await.map_err(io(address))?;
        let mut answer = [0u8; 2];
        stream.read_exact(&mut answer).await.map_err(io(address))?;
        if &answer != b"ok" {
            return Err(NodeError::Io(format!(
                "{address} refused protocol {}: is it a Voldemort server?",
                String::from_utf8_lossy(protocol)
            )));
        }
        Ok(BufReader::with_capacity(READ_BUFFER, stream))
    };
    tokio::time::timeout(timeout, handshake)
        .await
        .map_err(|_| {
            NodeError::Refused(format!("cannot connect to {address}: no answer in time"))
        })?
}

fn io(address: &str) -> impl Fn(std::io::Error) -> NodeError + '_ {
    move |e| NodeError::Refused(format!("{address}: {e}"))
}

/// Writes one framed request (4-byte big-endian length, then the message), in one
/// write call.
pub async fn send_frame(stream: &mut Stream, request: &[u8]) -> Result<(), NodeError> {
    let mut frame = Vec::with_capacity(4 + request.len());
    frame.extend_from_slice(&(request.len() as u32).to_be_bytes());
    frame.extend_from_slice(request);
    stream
        .get_mut()
        .write_all(&frame)
        .await
        .map_err(|e| NodeError::Io(e.to_string()))
}

/// Sends one framed request and reads its framed reply.
pub async fn exchange(stream: &mut Stream, request: &[u8]) -> Result<Vec<u8>, NodeError> {
    send_frame(stream, request).await?;
    read_frame(stream)
        .await?
        .ok_or_else(|| NodeError::Io("the stream ended where a reply was due".into()))
}

/// One framed message; `None` at a stream's end marker (length -1).
pub async fn read_frame(stream: &mut Stream) -> Result<Option<Vec<u8>>, NodeError> {
    let mut len = [0u8; 4];
    stream
        .read_exact(&mut len)
        .await
        .map_err(|e| NodeError::Io(e.to_string()))?;
    let len = i32::from_be_bytes(len);
    // -1 ends a stream of replies; no other length below zero means anything.
    if len == -1 {
        return Ok(None);
    }
    if len < 0 {
        return Err(NodeError::Io(format!("a reply of {len} bytes")));
    }
    if len as usize > MAX_FRAME {
        return Err(NodeError::Io(format!("a reply of {len} bytes")));
    }
    // Grown as the bytes arrive, never at once to a length the node only claims.
    let mut body = Vec::with_capacity((len as usize).min(READ_BUFFER));
    (&mut *stream)
        .take(len as u64)
        .read_to_end(&mut body)
        .await
        .map_err(|e| NodeError::Io(e.to_string()))?;
    if body.len() < len as usize {
        return Err(NodeError::Io("the connection ended inside a reply".into()));
    }
    Ok(Some(body))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::fuzz::{Mutator, for_a_while, greeting_server, runtime};
    use crate::db::voldemort::clock::VectorClock;

    fn framed(body: &[u8]) -> Vec<u8> {
        let mut out = (body.len() as u32).to_be_bytes().to_vec();
        out.extend_from_slice(body);
        out
    }

    /// A get's reply: one value and its clock.
    fn get_reply() -> Vec<u8> {
        let clock = VectorClock::from_entries(vec![(0, 3)], 1_700_000_000_000);
        let mut versioned = proto::Msg::default();
        versioned
            .bytes(1, b"value")
            .message(2, &proto::encode_clock(&clock));
        let mut reply = proto::Msg::default();
        reply.message(1, &versioned);
        framed(&reply.0)
    }

    /// A node that agrees on the protocol, then answers with `reply`.
    fn node(reply: Vec<u8>) -> NodeConns {
        // The node speaks first only after "pb0": its "ok" answers that.
        let port = greeting_server(Vec::new(), vec![b"ok".to_vec(), reply]);
        NodeConns::new(
            0,
            format!("127.0.0.1:{port}"),
            String::new(),
            1,
            Duration::from_millis(500),
            Duration::from_millis(200),
        )
    }

    #[test]
    fn a_reply_unmutated_reads_as_the_value_it_holds() {
        let node = node(get_reply());
        let request = proto::request(Op::Get, "hatshop", b"key", None);
        let reply = runtime()
            .block_on(node.call(Op::Get, b"key", &request))
            .unwrap();
        assert_eq!(reply.versions[0].value, b"value");
    }

    #[test]
    fn a_node_given_mutated_replies_ends_each_call_and_drops_what_it_could_not_read() {
        let runtime = runtime();
        let mut mutator = Mutator::new(8);
        let request = proto::request(Op::Get, "hatshop", b"key", None);
        let (mut answered, mut dropped) = (0, 0);
        for_a_while(1.0, 30, |_| {
            let node = node(mutator.mutate(&get_reply()));
            let outcome = runtime.block_on(node.call(Op::Get, b"key", &request));
            let kept = runtime.block_on(node.slots[0].lock()).is_some();
            match outcome {
                Ok(_) | Err(NodeError::Server(_)) => {
                    assert!(kept);
                    answered += 1;
                }
                Err(_) => {
                    assert!(
                        !kept,
                        "a connection that met what it could not read is dropped"
                    );
                    dropped += 1;
                }
            }
        });
        assert!(
            answered > 0 && dropped > 0,
            "{answered} answered, {dropped} dropped"
        );
    }
}
