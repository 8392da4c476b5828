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

use super::errors::kind_of_sqlstate;
use crate::db::classify::io_kind;
use crate::db::wire::{LaneConn, Socket, within};
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
    socket: Socket,
}

impl LaneConn for LeanConn {
    fn busy(&self) -> bool {
        self.socket.busy()
    }
}

impl LeanConn {
    /// Opens and logs in; `None` when the server asks for a password.
    pub async fn open(login: &Login) -> Result<Option<LeanConn>> {
        let handshake = Self::log_in(login);
        within(login.connect_timeout, "the PostgreSQL handshake", handshake).await
    }

    async fn log_in(login: &Login) -> Result<Option<LeanConn>> {
        let socket = Socket::open(&login.host, login.port, login.connect_timeout)
            .await
            .map_err(io_error)?;
        let mut conn = LeanConn { socket };
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
        let out = &mut conn.socket.out;
        out.clear();
        out.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
        out.extend_from_slice(&body);
        conn.send().await?;
        let (tag, body) = conn.message().await?;
        match tag {
            b'R' if body.get(..4) == Some(&[0, 0, 0, 0]) => {}
            b'R' => return Ok(None),
            b'E' => return Err(server_error(&body)),
            _ => return Err(unexpected(tag, "login")),
        }
        conn.ready("login").await?;
        conn.socket.answered();
        Ok(Some(conn))
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
        self.socket.answered();
        failed.map_or(Ok(reply), Err)
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
    /// one (errors, rows, tags), else an empty one.
    async fn message(&mut self) -> Result<(u8, Vec<u8>)> {
        loop {
            let buffered = self.socket.inbox.unread();
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
                    self.socket.inbox.take(whole);
                    return Ok((tag, body));
                }
            }
            self.socket.fill(whole).await.map_err(io_error)?;
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
