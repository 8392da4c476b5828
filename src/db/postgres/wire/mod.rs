//! hatshop's own client side of PostgreSQL's extended query protocol, for the
//! key-value statements alone (runs whose events are all key-value ones): each
//! statement is parsed once per connection, and each execution is one write (Bind,
//! Execute, Sync) and one read, with the parameters and the value in binary. The
//! driver hands every request to a connection task over a channel and the answer back
//! over another; here the lane's own task writes and reads, which costs the client
//! less CPU per operation (bench/NOTES.md, the race).
//!
//! It logs in as the driver does (login.rs: TLS by sslmode, then trust, a password,
//! MD5 or SCRAM-SHA-256); what the server sends is framed by frames.rs, which trusts
//! no length it was sent.

mod frames;
#[cfg(test)]
mod fuzz;
mod login;

use std::time::Duration;

use self::frames::{command_rows, first_column, frame, server_error};
use crate::db::classify::io_kind;
use crate::db::tls::{Tls, TlsFacts};
use crate::db::wire::{LaneConn, Socket};
use crate::db::{DbError, ErrorKind};

pub use login::Opened;

type Result<T> = std::result::Result<T, DbError>;

/// Protocol 3.0.
const PROTOCOL: i32 = 196_608;

/// Where and as whom to log in, and over what. Not `Debug`: it holds the password.
#[derive(Clone)]
pub struct Login {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: Option<String>,
    pub database: String,
    pub connect_timeout: Duration,
    /// TLS as sslmode asks (`None`: disable).
    pub tls: Option<Tls>,
}

/// What an execution returned: the rows its command tag counts, and the first
/// column of its first row, if it returned one.
pub struct Reply {
    pub rows: u64,
    pub value: Option<Vec<u8>>,
}

/// One connection. A request left unanswered (its call cancelled) leaves it unusable:
/// `busy` then says so, and its holder opens another.
pub struct LeanConn {
    socket: Socket,
}

impl LaneConn for LeanConn {
    fn busy(&self) -> bool {
        self.socket.busy()
    }
}

impl LeanConn {
    /// The TLS the connection speaks, if any.
    pub fn tls_facts(&self) -> Option<TlsFacts> {
        self.socket.tls_facts()
    }

    /// Parses `sql` as statement `name`, its parameters' types left to the server.
    pub async fn prepare(&mut self, name: &str, sql: &str) -> Result<()> {
        let out = &mut self.socket.out;
        out.clear();
        let at = begin(out, b'P');
        put_str(out, name);
        put_str(out, sql);
        out.extend_from_slice(&0i16.to_be_bytes());
        end(out, at);
        sync(out);
        self.send().await?;
        let mut failed = None;
        loop {
            let (tag, body) = self.message().await?;
            match tag {
                b'1' => {}
                b'E' => failed = Some(server_error(&body)),
                b'Z' => break,
                _ => return Err(unexpected(tag, "prepare")),
            }
        }
        self.socket.answered();
        failed.map_or(Ok(()), Err)
    }

    /// Executes statement `name` with `params` in binary; results come in binary too.
    pub async fn execute(&mut self, name: &str, params: &[&[u8]]) -> Result<Reply> {
        let out = &mut self.socket.out;
        out.clear();
        let at = begin(out, b'B');
        out.push(0); // the unnamed portal
        put_str(out, name);
        out.extend_from_slice(&1i16.to_be_bytes());
        out.extend_from_slice(&1i16.to_be_bytes());
        out.extend_from_slice(&(params.len() as i16).to_be_bytes());
        for param in params {
            out.extend_from_slice(&(param.len() as i32).to_be_bytes());
            out.extend_from_slice(param);
        }
        out.extend_from_slice(&1i16.to_be_bytes());
        out.extend_from_slice(&1i16.to_be_bytes());
        end(out, at);
        let at = begin(out, b'E');
        out.push(0);
        out.extend_from_slice(&0i32.to_be_bytes());
        end(out, at);
        sync(out);
        self.send().await?;
        let mut reply = Reply {
            rows: 0,
            value: None,
        };
        let mut failed = None;
        loop {
            // Read in place: `message` would copy each row and tag out, two
            // allocations a read.
            let (tag, whole) = self.whole_message().await?;
            let body = &self.socket.inbox.unread()[5..whole];
            match tag {
                b'2' | b'N' | b'Z' => {}
                b'D' if reply.value.is_none() => reply.value = first_column(body)?,
                b'D' => {}
                b'C' => reply.rows = command_rows(body),
                b'E' => failed = Some(server_error(body)),
                _ => return Err(unexpected(tag, "execute")),
            }
            self.socket.inbox.take(whole);
            if tag == b'Z' {
                break;
            }
        }
        self.socket.answered();
        failed.map_or(Ok(reply), Err)
    }

    /// Runs each `COPY … FROM STDIN` of `copies` with its rows (in the form the
    /// statement names) in one
    /// transaction whose commit does not wait for the WAL, all sent as one write and
    /// read back as one: where a COPY fails, the server skips the rows sent after it
    /// (it ignores copy data outside a COPY), every later statement fails, and the
    /// COMMIT of the failed transaction rolls it back. The first error is returned.
    pub async fn copy_in(&mut self, copies: &[(&str, &[u8])]) -> Result<()> {
        let out = &mut self.socket.out;
        out.clear();
        query(out, "BEGIN; SET LOCAL synchronous_commit TO off");
        for (sql, rows) in copies {
            query(out, sql);
            for chunk in rows.chunks(COPY_DATA_BYTES) {
                let at = begin(out, b'd');
                out.extend_from_slice(chunk);
                end(out, at);
            }
            out.extend_from_slice(&[b'c', 0, 0, 0, 4]);
        }
        query(out, "COMMIT");
        self.send().await?;
        // A batch's megabytes are not kept for the point reads that follow.
        self.socket.out.clear();
        self.socket.out.shrink_to(COPY_DATA_BYTES);
        let mut failed = None;
        // One ReadyForQuery per query sent.
        for _ in 0..copies.len() + 2 {
            loop {
                let (tag, body) = self.message().await?;
                match tag {
                    b'G' | b'C' | b'N' | b'S' => {}
                    b'E' => {
                        failed.get_or_insert_with(|| server_error(&body));
                    }
                    b'Z' => break,
                    _ => return Err(unexpected(tag, "COPY")),
                }
            }
        }
        self.socket.answered();
        failed.map_or(Ok(()), Err)
    }

    /// Says goodbye (Terminate), so the server logs no lost connection.
    pub async fn quit(self) {
        self.socket.close_with(&[b'X', 0, 0, 0, 4]).await;
    }

    async fn send(&mut self) -> Result<()> {
        self.socket.send().await.map_err(io_error)
    }

    /// Reads messages up to ReadyForQuery, failing on an error among them.
    async fn ready(&mut self, what: &str) -> Result<()> {
        loop {
            let (tag, body) = self.message().await?;
            match tag {
                b'Z' => return Ok(()),
                b'E' => return Err(server_error(&body)),
                b'S' | b'K' | b'N' => {}
                _ => return Err(unexpected(tag, what)),
            }
        }
    }

    /// The next message: its tag and a copy of its body only when the caller needs
    /// one (errors, rows, tags, logins), else an empty one.
    async fn message(&mut self) -> Result<(u8, Vec<u8>)> {
        let (tag, whole) = self.whole_message().await?;
        let body = match tag {
            b'E' | b'D' | b'C' | b'R' => self.socket.inbox.unread()[5..whole].to_vec(),
            _ => Vec::new(),
        };
        self.socket.inbox.take(whole);
        Ok((tag, body))
    }

    /// Waits until the next message has all arrived: its tag and whole length, the
    /// message left unread at the inbox's start (its body is `[5..whole]`).
    async fn whole_message(&mut self) -> Result<(u8, usize)> {
        loop {
            if let Some(found) = frame(self.socket.inbox.unread())? {
                return Ok(found);
            }
            self.socket.fill().await.map_err(io_error)?;
        }
    }
}

/// Bytes of COPY's rows per CopyData message, as libpq's `PQputCopyData` callers send.
const COPY_DATA_BYTES: usize = 64 << 10;

/// A simple-protocol Query message of `sql`.
fn query(out: &mut Vec<u8>, sql: &str) {
    let at = begin(out, b'Q');
    put_str(out, sql);
    end(out, at);
}

fn put_str(out: &mut Vec<u8>, text: &str) {
    out.extend_from_slice(text.as_bytes());
    out.push(0);
}

/// Starts a message with `tag`; returns where its length goes.
fn begin(out: &mut Vec<u8>, tag: u8) -> usize {
    out.push(tag);
    out.extend_from_slice(&[0; 4]);
    out.len() - 4
}

/// Writes the length of the message whose length goes at `at`.
fn end(out: &mut [u8], at: usize) {
    let len = (out.len() - at) as i32;
    out[at..at + 4].copy_from_slice(&len.to_be_bytes());
}

fn sync(out: &mut Vec<u8>) {
    out.extend_from_slice(&[b'S', 0, 0, 0, 4]);
}

/// A message that has no place where it came: the connection is out of step and
/// dropped, and the outcome of the request it answered is unknown.
fn unexpected(tag: u8, what: &str) -> DbError {
    DbError::new(
        ErrorKind::Connection,
        format!(
            "unexpected message '{}' from PostgreSQL in {what}",
            tag.escape_ascii()
        ),
    )
}

fn io_error(error: std::io::Error) -> DbError {
    DbError::new(io_kind(&error), error.to_string())
}
