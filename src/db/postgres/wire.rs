//! hatshop's own client side of PostgreSQL's extended query protocol, for the
//! key-value statements alone (runs whose events are all key-value ones): each
//! statement is parsed once per connection, and each execution is one write (Bind,
//! Execute, Sync) and one read, with the parameters and the value in binary. The
//! driver hands every request to a connection task over a channel and the answer back
//! over another; here the lane's own task writes and reads, which costs the client
//! less CPU per operation (bench/NOTES.md, the race).
//!
//! Logs in only where the server asks for no password (trust); a server that asks
//! for one is left to tokio-postgres, which speaks every authentication method.

use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use super::errors::kind_of_sqlstate;
use crate::db::classify::io_kind;
use crate::db::wire::{Inbox, LaneConn, connect};
use crate::db::{DbError, ErrorKind};

type Result<T> = std::result::Result<T, DbError>;

/// Protocol 3.0.
const PROTOCOL: i32 = 196_608;

/// Where and as whom to log in.
#[derive(Debug, Clone)]
pub struct Login {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub database: String,
    pub connect_timeout: Duration,
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
    stream: TcpStream,
    inbox: Inbox,
    out: Vec<u8>,
    busy: bool,
}

impl LaneConn for LeanConn {
    fn busy(&self) -> bool {
        self.busy
    }
}

impl LeanConn {
    /// Opens and logs in; `None` when the server asks for a password.
    pub async fn open(login: &Login) -> Result<Option<LeanConn>> {
        let limit = login.connect_timeout;
        tokio::time::timeout(limit, Self::log_in(login))
            .await
            .unwrap_or_else(|_| {
                Err(DbError::new(
                    ErrorKind::Timeout,
                    format!(
                        "no answer to the PostgreSQL handshake within {} s",
                        limit.as_secs_f64()
                    ),
                ))
            })
    }

    async fn log_in(login: &Login) -> Result<Option<LeanConn>> {
        let stream = connect(&login.host, login.port, login.connect_timeout)
            .await
            .map_err(io_error)?;
        let mut conn = LeanConn {
            stream,
            inbox: Inbox::new(8 * 1024),
            out: Vec::with_capacity(256),
            busy: false,
        };
        let mut body = PROTOCOL.to_be_bytes().to_vec();
        for (key, value) in [
            ("user", login.user.as_str()),
            ("database", login.database.as_str()),
            ("application_name", "hatshop"),
        ] {
            put_str(&mut body, key);
            put_str(&mut body, value);
        }
        body.push(0);
        let mut startup = ((body.len() + 4) as i32).to_be_bytes().to_vec();
        startup.extend_from_slice(&body);
        conn.stream.write_all(&startup).await.map_err(io_error)?;
        let (tag, body) = conn.message().await?;
        match tag {
            b'R' if body.get(..4) == Some(&[0, 0, 0, 0]) => {}
            b'R' => return Ok(None),
            b'E' => return Err(server_error(&body)),
            _ => return Err(unexpected(tag, "login")),
        }
        conn.ready("login").await?;
        Ok(Some(conn))
    }

    /// Parses `sql` as statement `name`, its parameters' types left to the server.
    pub async fn prepare(&mut self, name: &str, sql: &str) -> Result<()> {
        self.out.clear();
        let at = begin(&mut self.out, b'P');
        put_str(&mut self.out, name);
        put_str(&mut self.out, sql);
        self.out.extend_from_slice(&0i16.to_be_bytes());
        end(&mut self.out, at);
        sync(&mut self.out);
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
        self.busy = false;
        failed.map_or(Ok(()), Err)
    }

    /// Executes statement `name` with `params` in binary; results come in binary too.
    pub async fn execute(&mut self, name: &str, params: &[&[u8]]) -> Result<Reply> {
        self.out.clear();
        let at = begin(&mut self.out, b'B');
        self.out.push(0); // the unnamed portal
        put_str(&mut self.out, name);
        self.out.extend_from_slice(&1i16.to_be_bytes());
        self.out.extend_from_slice(&1i16.to_be_bytes());
        self.out
            .extend_from_slice(&(params.len() as i16).to_be_bytes());
        for param in params {
            self.out
                .extend_from_slice(&(param.len() as i32).to_be_bytes());
            self.out.extend_from_slice(param);
        }
        self.out.extend_from_slice(&1i16.to_be_bytes());
        self.out.extend_from_slice(&1i16.to_be_bytes());
        end(&mut self.out, at);
        let at = begin(&mut self.out, b'E');
        self.out.push(0);
        self.out.extend_from_slice(&0i32.to_be_bytes());
        end(&mut self.out, at);
        sync(&mut self.out);
        self.send().await?;
        let mut reply = Reply {
            rows: 0,
            value: None,
        };
        let mut failed = None;
        loop {
            let (tag, body) = self.message().await?;
            match tag {
                b'2' | b'N' => {}
                b'D' if reply.value.is_none() => reply.value = first_column(body),
                b'D' => {}
                b'C' => reply.rows = command_rows(body),
                b'E' => failed = Some(server_error(&body)),
                b'Z' => break,
                _ => return Err(unexpected(tag, "execute")),
            }
        }
        self.busy = false;
        failed.map_or(Ok(reply), Err)
    }

    /// Says goodbye (Terminate), so the server logs no lost connection.
    pub async fn quit(mut self) {
        if !self.busy {
            let _ = self.stream.write_all(&[b'X', 0, 0, 0, 4]).await;
            let _ = self.stream.shutdown().await;
        }
    }

    async fn send(&mut self) -> Result<()> {
        self.busy = true;
        self.stream.write_all(&self.out).await.map_err(io_error)
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
    /// one (errors, rows, tags), else an empty one.
    async fn message(&mut self) -> Result<(u8, Vec<u8>)> {
        loop {
            let buffered = self.inbox.unread();
            let mut whole = 0;
            if buffered.len() >= 5 {
                let len = i32::from_be_bytes([buffered[1], buffered[2], buffered[3], buffered[4]]);
                whole = 1 + len.max(4) as usize;
                if buffered.len() >= whole {
                    let tag = buffered[0];
                    let body = match tag {
                        b'E' | b'D' | b'C' | b'R' => buffered[5..whole].to_vec(),
                        _ => Vec::new(),
                    };
                    self.inbox.take(whole);
                    return Ok((tag, body));
                }
            }
            self.inbox
                .fill(&mut self.stream, whole)
                .await
                .map_err(io_error)?;
        }
    }
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

/// A DataRow's first column (`None` when it is NULL or the row has none).
fn first_column(body: Vec<u8>) -> Option<Vec<u8>> {
    let columns = i16::from_be_bytes([*body.first()?, *body.get(1)?]);
    let len = i32::from_be_bytes(body.get(2..6)?.try_into().ok()?);
    if columns < 1 || len < 0 {
        return None;
    }
    body.get(6..6 + len as usize).map(<[u8]>::to_vec)
}

/// The rows a CommandComplete tag counts: its last word ("SELECT 1", "INSERT 0 1").
fn command_rows(body: Vec<u8>) -> u64 {
    let text = String::from_utf8_lossy(&body);
    text.trim_end_matches('\0')
        .rsplit(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// An ErrorResponse as tokio-postgres's errors read: "SEVERITY: message (SQLSTATE code)".
fn server_error(body: &[u8]) -> DbError {
    let (mut severity, mut code, mut message) = (String::new(), String::new(), String::new());
    for field in body.split(|&b| b == 0).filter(|f| !f.is_empty()) {
        let text = String::from_utf8_lossy(&field[1..]).into_owned();
        match field[0] {
            b'S' => severity = text,
            b'C' => code = text,
            b'M' => message = text,
            _ => {}
        }
    }
    DbError::new(
        kind_of_sqlstate(&code),
        format!("{severity}: {message} (SQLSTATE {code})"),
    )
    .with_code(code)
}

fn unexpected(tag: u8, what: &str) -> DbError {
    DbError::new(
        ErrorKind::Other,
        format!(
            "unexpected message '{}' from PostgreSQL in {what}",
            tag as char
        ),
    )
}

fn io_error(error: std::io::Error) -> DbError {
    DbError::new(io_kind(&error), error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_are_read_as_the_driver_reads_them() {
        assert_eq!(command_rows(b"SELECT 1\0".to_vec()), 1);
        assert_eq!(command_rows(b"INSERT 0 1\0".to_vec()), 1);
        assert_eq!(command_rows(b"DELETE 0\0".to_vec()), 0);
        let mut row = 1i16.to_be_bytes().to_vec();
        row.extend_from_slice(&3i32.to_be_bytes());
        row.extend_from_slice(b"abc");
        assert_eq!(first_column(row), Some(b"abc".to_vec()));
        let mut null = 1i16.to_be_bytes().to_vec();
        null.extend_from_slice(&(-1i32).to_be_bytes());
        assert_eq!(first_column(null), None);
        let error = server_error(b"SERROR\0VERROR\0C23505\0Mduplicate key\0\0");
        assert_eq!(error.kind, ErrorKind::Constraint);
        assert_eq!(error.message, "ERROR: duplicate key (SQLSTATE 23505)");
    }
}
