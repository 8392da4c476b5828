//! The few protocol-buffer messages of Voldemort's `pb0` (client) and `ad1` (admin)
//! protocols that hatshop sends and reads, written by hand from upstream's
//! `voldemort-client.proto` and `voldemort-admin.proto` (proto2): a varint and
//! length-delimited encoder, and a field reader.

use super::clock::VectorClock;

/// `RequestType` of voldemort-client.proto.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Get = 0,
    Put = 2,
    Delete = 3,
    GetVersion = 4,
}

/// `AdminRequestType` of voldemort-admin.proto.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdminOp {
    FetchPartitionEntries = 3,
    TruncateEntries = 10,
}

/// An `Error` in a response: `code` as upstream's ErrorCodeMapper numbers them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerError {
    pub code: i32,
    pub message: String,
}

/// Upstream's error codes that hatshop tells apart: too few nodes answered.
pub const INSUFFICIENT_NODES: i32 = 2;
/// A write lost to a newer clock.
pub const OBSOLETE_VERSION: i32 = 4;
/// The server has no store of that name.
pub const STORE_NOT_FOUND: i32 = 22;

/// A value and the vector clock it was written with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Versioned {
    pub value: Vec<u8>,
    pub clock: VectorClock,
}

/// An encoder: fields appended in order.
#[derive(Default)]
pub struct Msg(pub Vec<u8>);

impl Msg {
    fn tag(&mut self, field: u32, wire: u8) {
        put_varint(&mut self.0, u64::from(field << 3 | u32::from(wire)));
    }

    /// Appends a varint field.
    pub fn varint(&mut self, field: u32, value: u64) -> &mut Self {
        self.tag(field, 0);
        put_varint(&mut self.0, value);
        self
    }

    /// An int32 or int64: negatives as ten-byte varints, as protobuf does.
    pub fn int(&mut self, field: u32, value: i64) -> &mut Self {
        self.varint(field, value as u64)
    }

    /// Appends a length-delimited field.
    pub fn bytes(&mut self, field: u32, bytes: &[u8]) -> &mut Self {
        self.tag(field, 2);
        put_varint(&mut self.0, bytes.len() as u64);
        self.0.extend_from_slice(bytes);
        self
    }

    /// Appends a nested message.
    pub fn message(&mut self, field: u32, inner: &Msg) -> &mut Self {
        self.bytes(field, &inner.0)
    }
}

fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// One field as read.
#[derive(Debug, Clone, Copy)]
pub enum Field<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    Fixed,
}

impl<'a> Field<'a> {
    fn bytes(self) -> Result<&'a [u8], String> {
        match self {
            Field::Bytes(b) => Ok(b),
            _ => Err("expected a length-delimited field".into()),
        }
    }

    fn varint(self) -> Result<u64, String> {
        match self {
            Field::Varint(v) => Ok(v),
            _ => Err("expected a varint field".into()),
        }
    }
}

/// Every (field number, value) of a message, in order.
pub fn fields(mut buf: &[u8]) -> impl Iterator<Item = Result<(u32, Field<'_>), String>> {
    std::iter::from_fn(move || {
        if buf.is_empty() {
            return None;
        }
        Some(next_field(&mut buf))
    })
}

fn next_field<'a>(buf: &mut &'a [u8]) -> Result<(u32, Field<'a>), String> {
    let key = varint(buf)?;
    let field = (key >> 3) as u32;
    let value = match key & 7 {
        0 => Field::Varint(varint(buf)?),
        1 => {
            take(buf, 8)?;
            Field::Fixed
        }
        2 => {
            let len = varint(buf)? as usize;
            Field::Bytes(take(buf, len)?)
        }
        5 => {
            take(buf, 4)?;
            Field::Fixed
        }
        other => return Err(format!("unknown wire type {other}")),
    };
    Ok((field, value))
}

fn varint(buf: &mut &[u8]) -> Result<u64, String> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let (&byte, rest) = buf.split_first().ok_or("truncated varint")?;
        *buf = rest;
        value |= u64::from(byte & 0x7F) << shift;
        if byte < 0x80 {
            return Ok(value);
        }
    }
    Err("varint longer than ten bytes".into())
}

fn take<'a>(buf: &mut &'a [u8], len: usize) -> Result<&'a [u8], String> {
    if buf.len() < len {
        return Err("truncated field".into());
    }
    let (head, rest) = buf.split_at(len);
    *buf = rest;
    Ok(head)
}

// --- Messages -----------------------------------------------------------------------

/// A vector clock as Voldemort's protocol buffers carry it.
pub fn encode_clock(clock: &VectorClock) -> Msg {
    let mut msg = Msg::default();
    for &(node, version) in clock.entries() {
        let mut entry = Msg::default();
        entry.int(1, i64::from(node)).int(2, version);
        msg.message(1, &entry);
    }
    msg.int(2, clock.timestamp());
    msg
}

/// A vector clock from its protocol buffer.
pub fn decode_clock(buf: &[u8]) -> Result<VectorClock, String> {
    let mut entries = Vec::new();
    let mut timestamp = 0;
    for field in fields(buf) {
        match field? {
            (1, f) => {
                let (mut node, mut version) = (0i32, 0i64);
                for inner in fields(f.bytes()?) {
                    match inner? {
                        (1, v) => node = v.varint()? as i32,
                        (2, v) => version = v.varint()? as i64,
                        _ => {}
                    }
                }
                entries.push((node, version));
            }
            (2, f) => timestamp = f.varint()? as i64,
            _ => {}
        }
    }
    Ok(VectorClock::from_entries(entries, timestamp))
}

fn encode_versioned(value: &[u8], clock: &VectorClock) -> Msg {
    let mut msg = Msg::default();
    msg.bytes(1, value).message(2, &encode_clock(clock));
    msg
}

fn decode_versioned(buf: &[u8]) -> Result<Versioned, String> {
    let mut value = Vec::new();
    let mut clock = VectorClock::default();
    for field in fields(buf) {
        match field? {
            (1, f) => value = f.bytes()?.to_vec(),
            (2, f) => clock = decode_clock(f.bytes()?)?,
            _ => {}
        }
    }
    Ok(Versioned { value, clock })
}

fn decode_error(buf: &[u8]) -> Result<ServerError, String> {
    let mut error = ServerError {
        code: 0,
        message: String::new(),
    };
    for field in fields(buf) {
        match field? {
            (1, f) => error.code = f.varint()? as i32,
            (2, f) => error.message = String::from_utf8_lossy(f.bytes()?).into_owned(),
            _ => {}
        }
    }
    Ok(error)
}

/// A `VoldemortRequest` for `store`, never asking the server to route.
pub fn request(op: Op, store: &str, key: &[u8], put: Option<(&[u8], &VectorClock)>) -> Vec<u8> {
    let mut msg = Msg::default();
    msg.varint(1, op as u64)
        .varint(2, 0)
        .bytes(3, store.as_bytes());
    let mut body = Msg::default();
    body.bytes(1, key);
    match op {
        Op::Get | Op::GetVersion => {
            msg.message(4, &body);
        }
        Op::Put => {
            let (value, clock) = put.expect("a put carries its value");
            body.message(2, &encode_versioned(value, clock));
            msg.message(6, &body);
        }
        Op::Delete => {
            let (_, clock) = put.expect("a delete carries its clock");
            body.message(2, &encode_clock(clock));
            msg.message(7, &body);
        }
    }
    msg.0
}

/// What a node answered to one request.
#[derive(Debug, Default)]
pub struct Reply {
    pub versions: Vec<Versioned>,
    pub clocks: Vec<VectorClock>,
    pub deleted: bool,
    pub error: Option<ServerError>,
}

/// Reads the response to `op` (the response names no type: the request says it).
pub fn reply(op: Op, buf: &[u8]) -> Result<Reply, String> {
    let mut reply = Reply::default();
    for field in fields(buf) {
        match (op, field?) {
            (Op::Get, (1, f)) => reply.versions.push(decode_versioned(f.bytes()?)?),
            (Op::GetVersion, (1, f)) => reply.clocks.push(decode_clock(f.bytes()?)?),
            (Op::Delete, (1, f)) => reply.deleted = f.varint()? != 0,
            (Op::Put, (1, f)) | (Op::Get | Op::GetVersion | Op::Delete, (2, f)) => {
                reply.error = Some(decode_error(f.bytes()?)?)
            }
            _ => {}
        }
    }
    Ok(reply)
}

/// An admin `TruncateEntriesRequest` for `store`.
pub fn truncate_request(store: &str) -> Vec<u8> {
    let mut inner = Msg::default();
    inner.bytes(1, store.as_bytes());
    let mut msg = Msg::default();
    msg.varint(1, AdminOp::TruncateEntries as u64)
        .message(12, &inner);
    msg.0
}

/// An admin `FetchPartitionEntriesRequest`: the keys (or entries) `store` holds in
/// `partitions` on the node asked.
pub fn fetch_request(store: &str, partitions: &[u32], values: bool) -> Vec<u8> {
    let mut inner = Msg::default();
    for &p in partitions {
        inner.varint(1, u64::from(p));
    }
    inner
        .bytes(2, store.as_bytes())
        .varint(4, u64::from(values));
    let mut msg = Msg::default();
    msg.varint(1, AdminOp::FetchPartitionEntries as u64)
        .message(5, &inner);
    msg.0
}

/// A `TruncateEntriesResponse`'s error, if any.
pub fn truncate_reply(buf: &[u8]) -> Result<Option<ServerError>, String> {
    for field in fields(buf) {
        if let (1, f) = field? {
            return Ok(Some(decode_error(f.bytes()?)?));
        }
    }
    Ok(None)
}

/// One `FetchPartitionEntriesResponse` of a stream: a key (of a key or an entry).
pub enum Fetched {
    Key(Vec<u8>),
    Error(ServerError),
}

/// The versions a get returned, or the server's error.
pub fn fetch_reply(buf: &[u8]) -> Result<Fetched, String> {
    for field in fields(buf) {
        match field? {
            (1, f) => {
                for inner in fields(f.bytes()?) {
                    if let (1, k) = inner? {
                        return Ok(Fetched::Key(k.bytes()?.to_vec()));
                    }
                }
                return Err("a partition entry without a key".into());
            }
            (2, f) => return Ok(Fetched::Key(f.bytes()?.to_vec())),
            (3, f) => return Ok(Fetched::Error(decode_error(f.bytes()?)?)),
            _ => {}
        }
    }
    Err("an empty fetch response".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_including_negative_ints() {
        for v in [0u64, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            assert_eq!(varint(&mut out.as_slice()).unwrap(), v);
        }
        let mut msg = Msg::default();
        msg.int(1, -1);
        assert_eq!(msg.0.len(), 11, "a negative int32 is a ten-byte varint");
    }

    #[test]
    fn a_get_request_is_what_protoc_would_write() {
        // protoc --encode of {type: GET, should_route: false, store: "s", get {key: "k"}}.
        let bytes = request(Op::Get, "s", b"k", None);
        assert_eq!(
            bytes,
            [
                0x08, 0x00, 0x10, 0x00, 0x1a, 0x01, b's', 0x22, 0x03, 0x0a, 0x01, b'k'
            ]
        );
    }

    #[test]
    fn clocks_and_replies_decode_what_encodes() {
        let clock = VectorClock::from_entries(vec![(2, 7), (0, 1)], 1_700_000_000_000);
        let back = decode_clock(&encode_clock(&clock).0).unwrap();
        assert_eq!(back, clock);
        let mut response = Msg::default();
        response.message(1, &encode_versioned(b"hat", &clock));
        let got = reply(Op::Get, &response.0).unwrap();
        assert_eq!(got.versions.len(), 1);
        assert_eq!(got.versions[0].value, b"hat");
        assert_eq!(got.versions[0].clock, clock);
        let mut error = Msg::default();
        error.int(1, 4).bytes(2, b"obsolete");
        let mut put_response = Msg::default();
        put_response.message(1, &error);
        let got = reply(Op::Put, &put_response.0).unwrap();
        assert_eq!(got.error.unwrap().code, OBSOLETE_VERSION);
        assert!(reply(Op::Get, &[0x0a, 0x05, 0x01]).is_err(), "truncated");
    }

    #[test]
    fn mutated_replies_decode_or_are_refused_never_a_panic() {
        use crate::db::fuzz::{Mutator, for_a_while};
        let clock = VectorClock::from_entries(vec![(2, 7), (0, 1)], 1_700_000_000_000);
        let mut get = Msg::default();
        get.message(1, &encode_versioned(b"hat", &clock));
        let mut error = Msg::default();
        error.int(1, 4).bytes(2, b"obsolete");
        let mut put = Msg::default();
        put.message(1, &error);
        let valid = [get.0, put.0, encode_clock(&clock).0];
        let mut mutator = Mutator::new(7);
        let ran = for_a_while(0.5, 10_000, |round| {
            let bytes = mutator.mutate(&valid[round as usize % valid.len()]);
            for op in [Op::Get, Op::Put, Op::Delete, Op::GetVersion] {
                let _ = reply(op, &bytes);
            }
            let _ = decode_clock(&bytes);
            let _ = fetch_reply(&bytes);
            let _ = truncate_reply(&bytes);
        });
        assert!(ran >= 10_000);
    }
}
