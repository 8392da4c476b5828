//! hatshop's own client side of MySQL's binary protocol, for the key-value statements
//! alone (`kv_wire=own`, the default for runs of key-value events): one write and one
//! read per statement, the parameters' types sent on a statement's first execute only,
//! MariaDB's cached metadata (the server leaves out the columns of each reply), and no
//! allocation but the value read: a point select costs the client less CPU this way
//! than through mysql_async (bench/NOTES.md, the race).
//!
//! Errors are mysql_async's own (`ServerError`, `IoError`, `DriverError`), so that
//! `classify` sorts them as it sorts the driver's. It logs in over TLS where ssl-mode
//! asks, with the plugins production accounts use (login.rs); a server that wants
//! another says so at connect (`UnknownAuthPlugin`) and the store keeps to mysql_async.
//! What the server sends is framed by packets.rs, which trusts no length it was sent.

use std::time::Duration;

use mysql_async::{DriverError, Error};
use tokio::io::AsyncWriteExt;

use crate::db::tls::{Tls, TlsFacts};
use crate::db::wire::{Inbox, Stream};
use packets::{
    column_is_bytes, io_error, lenenc, lenenc_bytes, packet_len, put_lenenc, server_error,
    unexpected,
};

#[cfg(test)]
mod fuzz;
mod login;
mod packets;

pub use login::{Spoken, spoken};

type Result<T> = std::result::Result<T, Error>;

const COM_QUIT: u8 = 0x01;
const COM_QUERY: u8 = 0x03;
const COM_STMT_PREPARE: u8 = 0x16;
const COM_STMT_EXECUTE: u8 = 0x17;
const MYSQL_TYPE_LONGLONG: u8 = 0x08;
const MYSQL_TYPE_VAR_STRING: u8 = 0xFD;
/// A packet's longest body; a longer one goes on in the next packet.
const MAX_BODY: usize = 0xFF_FFFF;
/// utf8mb4_general_ci, as mysql_async asks for.
const UTF8MB4: u8 = 45;

/// Where and as whom to log in. Not `Debug`: it holds the password.
#[derive(Clone)]
pub struct Login {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: Option<String>,
    pub database: String,
    /// Galera's `wsrep_sync_wait` for the session.
    pub sync_wait: Option<u64>,
    pub connect_timeout: Duration,
    /// TLS as ssl-mode asks (`None`: DISABLED).
    pub tls: Option<Tls>,
}

/// A value bound to a statement: sent as BIGINT or as a string of bytes.
#[derive(Clone, Copy)]
pub enum Param<'a> {
    Int(i64),
    Bytes(&'a [u8]),
}

/// What a statement did: the rows it changed (found, for updates), and the first
/// column of its first row when it returned rows.
pub struct Reply {
    pub affected: u64,
    pub value: Option<Vec<u8>>,
}

/// The first packet of a reply, read.
enum Head {
    /// OK: nothing more follows.
    Done { affected: u64 },
    /// Rows of `columns` columns follow.
    Rows { columns: usize },
}

/// A statement prepared on one connection.
pub struct Prepared {
    id: u32,
    params: u16,
    types_sent: bool,
}

/// One connection over hatshop's own client of the binary protocol.
pub struct LeanConn {
    stream: Stream,
    inbox: Inbox,
    write: Vec<u8>,
    /// The sequence number of the last packet read; a reply to it goes on from there.
    sequence: u8,
    /// The server leaves out the columns of a prepared statement's rows.
    cache_metadata: bool,
    /// A request whose reply was not read to its end (an error on the wire, or a
    /// caller that gave up): the connection cannot be used again.
    pub broken: bool,
}

impl LeanConn {
    /// The TLS the connection speaks, if any.
    pub fn tls_facts(&self) -> Option<TlsFacts> {
        self.stream.tls_facts()
    }

    /// Says goodbye (COM_QUIT), so that the server does not count an aborted client.
    pub async fn quit(mut self) {
        if !self.broken {
            self.stream.close_with(&[1, 0, 0, 0, COM_QUIT]).await;
        }
    }

    /// Prepares `sql`, whose rows (if any) must start with a string or blob column.
    pub async fn prepare(&mut self, sql: &str) -> Result<Prepared> {
        self.request(COM_STMT_PREPARE, sql.as_bytes()).await?;
        let answer = self.packet().await?;
        match answer.first() {
            Some(0x00) if answer.len() >= 9 => {}
            Some(0xFF) => return self.finish(Err(server_error(&answer))),
            _ => return Err(unexpected(&answer)),
        }
        let u16_at = |i: usize| u16::from_le_bytes([answer[i], answer[i + 1]]);
        let id = u32::from_le_bytes([answer[1], answer[2], answer[3], answer[4]]);
        let (columns, params) = (u16_at(5), u16_at(7));
        // Each list of definitions ends with an EOF packet.
        for _ in 0..params.min(1) + params {
            self.skip().await?;
        }
        for i in 0..columns.min(1) + columns {
            let len = self.next_len().await?;
            if i == 0 {
                let definition = &self.inbox.unread()[4..4 + len];
                if !column_is_bytes(definition) {
                    // Not what any statement of hatshop's returns: the connection is
                    // not trusted further.
                    return Err(unexpected(b"a first column that is not a string or blob"));
                }
            }
            self.inbox.take(4 + len);
        }
        self.broken = false;
        Ok(Prepared {
            id,
            params,
            types_sent: false,
        })
    }

    /// Executes `statement` with `params`.
    pub async fn execute(
        &mut self,
        statement: &mut Prepared,
        params: &[Param<'_>],
    ) -> Result<Reply> {
        if params.len() != statement.params as usize {
            return Err(Error::Driver(DriverError::StmtParamsMismatch {
                required: statement.params,
                supplied: params.len(),
            }));
        }
        self.write.clear();
        self.write
            .extend_from_slice(&[0, 0, 0, 0, COM_STMT_EXECUTE]);
        self.write.extend_from_slice(&statement.id.to_le_bytes());
        self.write.push(0); // no cursor
        self.write.extend_from_slice(&1u32.to_le_bytes()); // iteration count
        if !params.is_empty() {
            // No NULLs: an empty bitmap.
            self.write
                .extend(std::iter::repeat_n(0, params.len().div_ceil(8)));
            self.write.push(u8::from(!statement.types_sent));
            if !statement.types_sent {
                for param in params {
                    let kind = match param {
                        Param::Int(_) => MYSQL_TYPE_LONGLONG,
                        Param::Bytes(_) => MYSQL_TYPE_VAR_STRING,
                    };
                    self.write.extend_from_slice(&[kind, 0]);
                }
            }
            for param in params {
                match param {
                    Param::Int(n) => self.write.extend_from_slice(&n.to_le_bytes()),
                    Param::Bytes(bytes) => {
                        put_lenenc(&mut self.write, bytes.len() as u64);
                        self.write.extend_from_slice(bytes);
                    }
                }
            }
        }
        self.broken = true;
        self.flush_write(0).await?;
        let reply = self.read_reply().await;
        if reply.is_ok() {
            statement.types_sent = true;
        }
        self.finish(reply)
    }

    /// Runs `sql` as text; returns the first column of each row it returned.
    pub async fn query_column(&mut self, sql: &str) -> Result<Vec<Option<Vec<u8>>>> {
        self.request(COM_QUERY, sql.as_bytes()).await?;
        let column = self.read_text_column().await;
        self.finish(column)
    }

    /// Marks the connection usable again once a reply was read to its end.
    fn finish<T>(&mut self, result: Result<T>) -> Result<T> {
        if matches!(result, Ok(_) | Err(Error::Server(_))) {
            self.broken = false;
        }
        result
    }

    /// A text-protocol reply: the first column of each row (NULL as `None`).
    async fn read_text_column(&mut self) -> Result<Vec<Option<Vec<u8>>>> {
        let mut column = Vec::new();
        if let Head::Rows { .. } = self.read_head().await? {
            self.read_rows(|row| {
                column.push(match row.first() {
                    Some(0xFB) => None,
                    _ => Some(
                        lenenc_bytes(row, &mut 0)
                            .ok_or_else(|| unexpected(row))?
                            .to_vec(),
                    ),
                });
                Ok(())
            })
            .await?;
        }
        Ok(column)
    }

    /// A binary-protocol reply: OK, an error, or rows whose first column is bytes.
    async fn read_reply(&mut self) -> Result<Reply> {
        let columns = match self.read_head().await? {
            Head::Done { affected } => {
                return Ok(Reply {
                    affected,
                    value: None,
                });
            }
            Head::Rows { columns } => columns,
        };
        let mut value = None;
        self.read_rows(|row| {
            if value.is_none() {
                // 0x00, a NULL bitmap with two bits of offset, the values.
                let bitmap = (columns + 7 + 2) / 8;
                // A NULL reads as empty: hatshop's value columns are NOT NULL.
                let null = row.get(1).is_some_and(|b| b & (1 << 2) != 0);
                let mut at = 1 + bitmap;
                value = Some(if null {
                    Vec::new()
                } else {
                    lenenc_bytes(row, &mut at)
                        .ok_or_else(|| unexpected(row))?
                        .to_vec()
                });
            }
            Ok(())
        })
        .await?;
        Ok(Reply { affected: 0, value })
    }

    /// A reply's first packet: OK, an error, or the count of the columns of rows to
    /// come, whose definitions (when sent) and their EOF it passes over.
    async fn read_head(&mut self) -> Result<Head> {
        let len = self.next_len().await?;
        let head = &self.inbox.unread()[4..4 + len];
        // OK: 0x00, then the rows changed; rows: the count of their columns.
        let mut at = usize::from(head.first() == Some(&0x00));
        let read = match head.first() {
            Some(0xFF) => Err(server_error(head)),
            Some(0x00) => lenenc(head, &mut at)
                .map(|affected| Head::Done { affected })
                .ok_or_else(|| unexpected(head)),
            _ => lenenc(head, &mut at)
                .map(|columns| Head::Rows {
                    columns: columns as usize,
                })
                .ok_or_else(|| unexpected(head)),
        };
        // With cached metadata, a byte says whether the definitions follow (text
        // replies always send them); an EOF packet ends them either way.
        let follow = !self.cache_metadata || head.get(at) != Some(&0);
        self.inbox.take(4 + len);
        let read = read?;
        if let Head::Rows { columns } = read {
            let definitions = if follow { columns } else { 0 };
            for _ in 0..=definitions {
                self.skip().await?;
            }
        }
        Ok(read)
    }

    /// Reads rows up to the EOF that ends them, handing each packet's body to `each`.
    async fn read_rows(&mut self, mut each: impl FnMut(&[u8]) -> Result<()>) -> Result<()> {
        loop {
            let len = self.next_len().await?;
            let row = &self.inbox.unread()[4..4 + len];
            let read = match row.first() {
                Some(0xFE) if len < 9 => {
                    self.inbox.take(4 + len);
                    return Ok(());
                }
                Some(0xFF) => Err(server_error(row)),
                _ => each(row),
            };
            self.inbox.take(4 + len);
            read?;
        }
    }

    /// Sends command `command` with `body` as a new request (sequence 0).
    async fn request(&mut self, command: u8, body: &[u8]) -> Result<()> {
        self.write.clear();
        self.write.extend_from_slice(&[0, 0, 0, 0, command]);
        self.write.extend_from_slice(body);
        self.broken = true;
        self.flush_write(0).await
    }

    /// Sends `body` as the reply to the last packet read (during login).
    async fn send_reply(&mut self, body: &[u8]) -> Result<()> {
        self.write.clear();
        self.write.extend_from_slice(&[0; 4]);
        self.write.extend_from_slice(body);
        let sequence = self.sequence.wrapping_add(1);
        self.flush_write(sequence).await
    }

    /// Writes the packet in `write` (whose first four bytes are left for its header),
    /// split into packets of at most `MAX_BODY` bytes.
    async fn flush_write(&mut self, mut sequence: u8) -> Result<()> {
        let body = self.write.len() - 4;
        let mut stream = self.stream.here().map_err(io_error)?;
        if body < MAX_BODY {
            self.write[..3].copy_from_slice(&(body as u32).to_le_bytes()[..3]);
            self.write[3] = sequence;
            stream.write_all(&self.write).await.map_err(io_error)?;
            return stream.flush().await.map_err(io_error);
        }
        let mut at = 4;
        loop {
            let chunk = (self.write.len() - at).min(MAX_BODY);
            let mut header = (chunk as u32).to_le_bytes();
            header[3] = sequence;
            stream.write_all(&header).await.map_err(io_error)?;
            stream
                .write_all(&self.write[at..at + chunk])
                .await
                .map_err(io_error)?;
            at += chunk;
            sequence = sequence.wrapping_add(1);
            if chunk < MAX_BODY {
                return stream.flush().await.map_err(io_error);
            }
        }
    }

    /// The next packet's body, copied (login only).
    async fn packet(&mut self) -> Result<Vec<u8>> {
        let len = self.next_len().await?;
        let body = self.inbox.unread()[4..4 + len].to_vec();
        self.inbox.take(4 + len);
        Ok(body)
    }

    /// Passes over the next packet.
    async fn skip(&mut self) -> Result<()> {
        let len = self.next_len().await?;
        self.inbox.take(4 + len);
        Ok(())
    }

    /// Reads until a whole packet is buffered at `start`; returns its body's length.
    /// A body that goes on in the next packet (16 MiB or more: a row no key-value
    /// table of hatshop's holds) is refused.
    async fn next_len(&mut self) -> Result<usize> {
        loop {
            if let Some((len, sequence)) = packet_len(self.inbox.unread())? {
                self.sequence = sequence;
                return Ok(len);
            }
            let mut stream = self.stream.wire().map_err(io_error)?;
            self.inbox.fill(&mut stream).await.map_err(io_error)?;
        }
    }
}
