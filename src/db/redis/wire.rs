//! hatshop's own client side of Redis's protocol (RESP2), for the key-value commands
//! alone (runs whose events are all key-value ones, unpipelined): each request is one
//! write and its reply one read, on the lane's own connection. The `redis` crate hands
//! each request to a connection task over a channel and the answer back over another;
//! here the lane's own task writes and reads, which costs the client less CPU per
//! operation (bench/NOTES.md, the race).

use std::time::Duration;

use super::errors::kind_of_code;
use crate::db::classify::io_kind;
use crate::db::tls::{Tls, TlsFacts, TlsSettings};
use crate::db::wire::{LaneConn, Socket, within};
use crate::db::{DbError, ErrorKind};

type Result<T> = std::result::Result<T, DbError>;

/// The longest bulk string Redis sends by default (`proto-max-bulk-len`); a longer
/// length is not read as one.
const MAX_BULK: i64 = 512 * 1024 * 1024;
/// The longest status, error or length line hatshop waits for the end of.
const MAX_LINE: usize = 64 * 1024;

/// Where and as whom to log in, and over what. No `Debug`: it holds the password.
#[derive(Clone)]
pub struct Login {
    pub host: String,
    pub port: u16,
    pub user: Option<String>,
    pub password: Option<String>,
    /// Where the password came from (`URL`, `REDISCLI_AUTH`).
    pub password_from: Option<&'static str>,
    pub db: i64,
    pub connect_timeout: Duration,
    /// TLS to the host (`None`: plain TCP), and the settings it was made from.
    pub tls: Option<Tls>,
    pub tls_settings: TlsSettings,
}

/// A reply to a key-value command.
#[derive(Debug, PartialEq, Eq)]
pub enum Reply {
    /// A status line, as `+OK`.
    Status,
    /// A nil bulk string: no such key, or a `SET … NX|XX` that did nothing.
    Nil,
    Bulk(Vec<u8>),
    Integer(i64),
}

/// One connection. A request left unanswered (its call cancelled) leaves it unusable:
/// `busy` then says so, and its slot opens another.
pub struct LeanConn {
    socket: Socket,
}

impl LaneConn for LeanConn {
    fn busy(&self) -> bool {
        self.socket.busy()
    }
}

impl LeanConn {
    /// Connects, logs in (AUTH, when the URL has a password) and selects the
    /// database, within the connect timeout.
    pub async fn open(login: &Login) -> Result<LeanConn> {
        let what = match &login.tls {
            Some(tls) => format!(
                "the Redis login over TLS to {} (a port without TLS never answers its handshake)",
                tls.target
            ),
            None => "the Redis login".into(),
        };
        within(login.connect_timeout, &what, Self::log_in(login)).await
    }

    async fn log_in(login: &Login) -> Result<LeanConn> {
        let socket = Socket::open(&login.host, login.port, login.connect_timeout)
            .await
            .map_err(io_error)?;
        let mut conn = LeanConn { socket };
        if let Some(tls) = &login.tls {
            conn.socket.start_tls(tls).await?;
        }
        if let Some(password) = &login.password {
            let mut auth: Vec<&[u8]> = vec![b"AUTH"];
            auth.extend(login.user.as_deref().map(str::as_bytes));
            auth.push(password.as_bytes());
            conn.command(&auth).await?;
        }
        if login.db != 0 {
            conn.command(&[b"SELECT", login.db.to_string().as_bytes()])
                .await?;
        }
        Ok(conn)
    }

    /// The TLS the connection speaks, if any.
    pub fn tls_facts(&self) -> Option<TlsFacts> {
        self.socket.tls_facts()
    }

    /// Whether the server answers PING in Redis's protocol: a status, or an error reply
    /// (NOAUTH is Redis's too); anything else, a line past [`MAX_LINE`] included, is
    /// the error, read no further.
    pub async fn answers_ping(&mut self) -> Result<()> {
        encode(&mut self.socket.out, &[b"PING"]);
        self.socket.send().await.map_err(io_error)?;
        loop {
            if let Some((_, len)) = decode(self.socket.inbox.unread())? {
                self.socket.inbox.take(len);
                self.socket.answered();
                return Ok(());
            }
            self.socket.fill().await.map_err(io_error)?;
        }
    }

    /// Sends every command of `commands` in one write and reads a reply to each, in
    /// order, as `redis-cli --pipe` sends: each reply, a server's error among them. A
    /// reply hatshop cannot read, or a connection lost, is the error of the whole.
    pub async fn pipeline(&mut self, commands: &[&[&[u8]]]) -> Result<Vec<Result<Reply>>> {
        self.socket.out.clear();
        for args in commands {
            append(&mut self.socket.out, args);
        }
        self.socket.send().await.map_err(io_error)?;
        let mut replies = Vec::with_capacity(commands.len());
        while replies.len() < commands.len() {
            match decode(self.socket.inbox.unread())? {
                Some((reply, len)) => {
                    self.socket.inbox.take(len);
                    replies.push(reply);
                }
                None => self.socket.fill().await.map_err(io_error)?,
            }
        }
        self.socket.answered();
        Ok(replies)
    }

    /// Sends one command and reads its reply; a server error is the error.
    pub async fn command(&mut self, args: &[&[u8]]) -> Result<Reply> {
        encode(&mut self.socket.out, args);
        self.socket.send().await.map_err(io_error)?;
        loop {
            if let Some((reply, len)) = decode(self.socket.inbox.unread())? {
                self.socket.inbox.take(len);
                self.socket.answered();
                return reply;
            }
            self.socket.fill().await.map_err(io_error)?;
        }
    }
}

/// `args` as a RESP array of bulk strings, in place of what `out` held.
fn encode(out: &mut Vec<u8>, args: &[&[u8]]) {
    out.clear();
    append(out, args);
}

/// `args` as a RESP array of bulk strings, after what `out` holds.
fn append(out: &mut Vec<u8>, args: &[&[u8]]) {
    header(out, b'*', args.len());
    for arg in args {
        header(out, b'$', arg.len());
        out.extend_from_slice(arg);
        out.extend_from_slice(b"\r\n");
    }
}

fn header(out: &mut Vec<u8>, tag: u8, n: usize) {
    out.push(tag);
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// The first reply in `buf` and the bytes it took, `None` while it is not all there;
/// the outer error is a reply hatshop cannot read, the inner one the server's error.
fn decode(buf: &[u8]) -> Result<Option<(Result<Reply>, usize)>> {
    let Some(&tag) = buf.first() else {
        return Ok(None);
    };
    if !matches!(tag, b'+' | b'-' | b':' | b'$') {
        return Err(garbled(format!(
            "a reply that begins with '{}'",
            tag.escape_ascii()
        )));
    }
    let Some(eol) = buf[1..]
        .windows(2)
        .position(|w| w == b"\r\n")
        .map(|at| at + 1)
    else {
        if buf.len() > MAX_LINE {
            return Err(garbled(format!("a line of more than {MAX_LINE} bytes")));
        }
        return Ok(None);
    };
    let line = &buf[1..eol];
    let after = eol + 2;
    let reply = match tag {
        b'+' => Ok(Reply::Status),
        b'-' => Err(server_error(line)),
        b':' => Ok(Reply::Integer(number(line)?)),
        _ => match number(line)? {
            -1 => Ok(Reply::Nil),
            len if !(0..=MAX_BULK).contains(&len) => {
                return Err(garbled(format!("a value of {len} bytes")));
            }
            len => {
                let end = after + len as usize;
                let Some(value) = buf.get(after..end) else {
                    return Ok(None);
                };
                match buf.get(end..end + 2) {
                    None | Some(b"\r") => return Ok(None),
                    Some(b"\r\n") => {}
                    Some(_) => return Err(garbled("a value not ended by CRLF".into())),
                }
                return Ok(Some((Ok(Reply::Bulk(value.to_vec())), end + 2)));
            }
        },
    };
    Ok(Some((reply, after)))
}

/// A reply hatshop cannot read: the connection is dropped (its request's outcome is
/// unknown).
fn garbled(what: String) -> DbError {
    DbError::new(
        ErrorKind::Connection,
        format!("Redis sent {what}, which hatshop cannot read: the connection is dropped"),
    )
}

fn number(line: &[u8]) -> Result<i64> {
    std::str::from_utf8(line)
        .ok()
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| {
            garbled(format!(
                "a number that is not one ('{}')",
                line.iter()
                    .take(32)
                    .copied()
                    .collect::<Vec<u8>>()
                    .escape_ascii()
            ))
        })
}

/// `-CODE message`, as the `redis` crate words it: "CODE: message".
fn server_error(line: &[u8]) -> DbError {
    let text = String::from_utf8_lossy(line);
    let (code, message) = text.split_once(' ').unwrap_or((&text, ""));
    DbError::new(kind_of_code(code), format!("{code}: {message}")).with_code(code.to_string())
}

fn io_error(error: std::io::Error) -> DbError {
    DbError::new(io_kind(&error), error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::ErrorKind;

    #[test]
    fn commands_are_arrays_of_bulk_strings() {
        let mut out = b"left over".to_vec();
        encode(&mut out, &[b"GET", b"hatshop:kv:k1"]);
        assert_eq!(out, b"*2\r\n$3\r\nGET\r\n$13\r\nhatshop:kv:k1\r\n");
    }

    #[test]
    fn replies_are_read_whole_or_not_at_all() {
        let reply = |buf: &[u8]| decode(buf).unwrap().map(|(r, n)| (r.unwrap(), n));
        assert_eq!(reply(b"+OK\r\n"), Some((Reply::Status, 5)));
        assert_eq!(reply(b"$-1\r\n+OK"), Some((Reply::Nil, 5)));
        assert_eq!(reply(b":3\r\n"), Some((Reply::Integer(3), 4)));
        assert_eq!(
            reply(b"$3\r\nabc\r\n"),
            Some((Reply::Bulk(b"abc".to_vec()), 9))
        );
        assert_eq!(reply(b"$3\r\nab"), None);
        assert_eq!(reply(b"$3\r\nabc"), None);
        assert_eq!(reply(b"+O"), None);
        let (error, n) = decode(b"-WRONGTYPE Operation against a key\r\n")
            .unwrap()
            .unwrap();
        let error = error.unwrap_err();
        assert_eq!(n, 36);
        assert_eq!(error.message, "WRONGTYPE: Operation against a key");
        assert_eq!(error.code.as_deref(), Some("WRONGTYPE"));
        let error = decode(b"-LOADING Redis is loading\r\n").unwrap().unwrap().0;
        assert_eq!(error.unwrap_err().kind, ErrorKind::Unavailable);
        assert!(decode(b"*1\r\n").is_err());
        assert!(decode(b"$x\r\n").is_err());
        assert!(decode(b"$9223372036854775807\r\n").is_err());
        assert!(decode(b"\r\n+OK\r\n").is_err(), "a stray CRLF first");
        assert!(
            decode(b"$3\r\nabcX\r\n").is_err(),
            "a value longer than it said"
        );
        assert!(decode(b"$-2\r\n").is_err());
    }

    #[test]
    fn mutated_replies_are_read_whole_refused_or_waited_for_never_a_panic() {
        use crate::db::fuzz::{Mutator, for_a_while};
        let valid: &[&[u8]] = &[
            b"+OK\r\n",
            b"$-1\r\n",
            b":1\r\n",
            b"$5\r\nvalue\r\n",
            b"-WRONGTYPE Operation against a key\r\n",
        ];
        let mut mutator = Mutator::new(3);
        let ran = for_a_while(0.5, 10_000, |round| {
            let bytes = mutator.mutate(valid[round as usize % valid.len()]);
            if let Ok(Some((_, taken))) = decode(&bytes) {
                assert!(taken <= bytes.len());
            }
        });
        assert!(ran >= 10_000);
    }

    #[test]
    fn a_connection_given_mutated_replies_ends_each_call_and_drops_what_it_could_not_read() {
        use crate::db::fuzz::{Mutator, for_a_while, replying_server, runtime};
        let runtime = runtime();
        let mut mutator = Mutator::new(4);
        let (mut calls, mut dropped) = (0, 0);
        for_a_while(1.0, 30, |round| {
            let valid: &[u8] = match round % 3 {
                0 => b"$5\r\nvalue\r\n",
                1 => b"+OK\r\n",
                _ => b"-ERR no\r\n",
            };
            let port = replying_server(vec![mutator.mutate(valid)]);
            let login = Login {
                host: "127.0.0.1".into(),
                port,
                user: None,
                password: None,
                password_from: None,
                db: 0,
                connect_timeout: Duration::from_millis(500),
                tls: None,
                tls_settings: TlsSettings::disabled(),
            };
            runtime.block_on(async {
                let Ok(mut conn) = LeanConn::open(&login).await else {
                    return;
                };
                calls += 1;
                let read = conn.command(&[b"GET", b"key"]);
                match tokio::time::timeout(Duration::from_millis(200), read).await {
                    Ok(Ok(_)) => assert!(!conn.busy()),
                    Ok(Err(e)) if e.code.is_some() => assert!(!conn.busy()),
                    Ok(Err(_)) | Err(_) => {
                        assert!(
                            conn.busy(),
                            "a connection that met what it could not read is dropped"
                        );
                        dropped += 1;
                    }
                }
            });
        });
        assert!(calls > 0 && dropped > 0, "{calls} calls, {dropped} dropped");
    }
}
