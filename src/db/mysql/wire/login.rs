//! Logging in over hatshop's own wire: TLS first where ssl-mode asks and the server
//! offers it (the SSL request, then the handshake), then the login with the plugin
//! the user's account names: mysql_native_password, MySQL 8's caching_sha2_password
//! (its fast path, and the full login over TLS) or MariaDB's client_ed25519. A login
//! it cannot finish (caching_sha2_password's full login without TLS, which needs the
//! server's RSA key; another plugin) is `UnknownAuthPlugin`, and the store keeps to
//! mysql_async, with a line saying why.

use mysql_async::{DriverError, Error};
use mysql_common::scramble::{create_response_for_ed25519, scramble_native, scramble_sha256};

use super::packets::{Greeting, io_error, server_error, unexpected};
use super::{LeanConn, Login, MAX_BODY, Result, UTF8MB4};
use crate::db::tls::{TlsFacts, server_refused};
use crate::db::wire::{Inbox, Stream, connect};

const CLIENT_LONG_PASSWORD: u32 = 1;
const CLIENT_FOUND_ROWS: u32 = 1 << 1;
const CLIENT_CONNECT_WITH_DB: u32 = 1 << 3;
const CLIENT_PROTOCOL_41: u32 = 1 << 9;
const CLIENT_SSL: u32 = 1 << 11;
const CLIENT_TRANSACTIONS: u32 = 1 << 13;
const CLIENT_SECURE_CONNECTION: u32 = 1 << 15;
const CLIENT_PLUGIN_AUTH: u32 = 1 << 19;
/// MariaDB's: the server leaves out the columns of a prepared statement's rows.
const MARIADB_CLIENT_CACHE_METADATA: u32 = 1 << 4;

const NATIVE_PASSWORD: &str = "mysql_native_password";
const CACHING_SHA2: &str = "caching_sha2_password";
const ED25519: &str = "client_ed25519";
/// caching_sha2_password's word after its scramble: the server had the password
/// cached, or wants it whole.
const FAST_AUTH_DONE: u8 = 3;
const FULL_AUTH: u8 = 4;

impl LeanConn {
    /// Connects and logs in, within the login's connect timeout.
    pub async fn open(login: &Login) -> Result<LeanConn> {
        let timed_out = || {
            io_error(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!(
                    "no connection to {}:{} within {} s",
                    login.host,
                    login.port,
                    login.connect_timeout.as_secs_f64()
                ),
            ))
        };
        tokio::time::timeout(login.connect_timeout, Self::log_in(login))
            .await
            .map_err(|_| timed_out())?
    }

    async fn log_in(login: &Login) -> Result<LeanConn> {
        let stream = connect(&login.host, login.port, login.connect_timeout)
            .await
            .map_err(io_error)?;
        let mut conn = LeanConn {
            stream: Stream::new(stream),
            inbox: Inbox::new(16 * 1024),
            write: Vec::with_capacity(1024),
            sequence: 0,
            cache_metadata: false,
            broken: true,
        };
        let greeting = Greeting::parse(&conn.packet().await?)?;
        let mut caps = greeting.caps
            & (CLIENT_LONG_PASSWORD
                | CLIENT_FOUND_ROWS
                | CLIENT_CONNECT_WITH_DB
                | CLIENT_PROTOCOL_41
                | CLIENT_TRANSACTIONS
                | CLIENT_SECURE_CONNECTION
                | CLIENT_PLUGIN_AUTH);
        if caps & CLIENT_PROTOCOL_41 == 0 {
            return Err(unexpected(b"a server older than protocol 4.1"));
        }
        let mariadb_caps = greeting.mariadb_caps & MARIADB_CLIENT_CACHE_METADATA;
        conn.cache_metadata = mariadb_caps != 0;
        let mut reply = Vec::new();
        let mut secure = false;
        if let Some(tls) = &login.tls {
            if greeting.caps & CLIENT_SSL != 0 {
                caps |= CLIENT_SSL;
                // The SSL request: the login's fixed head alone, then the handshake.
                head(&mut reply, caps, mariadb_caps);
                conn.send_reply(&reply).await?;
                conn.sequence = conn.sequence.wrapping_add(1);
                conn.stream.start_tls(tls).await.map_err(tls_failed)?;
                secure = true;
            } else if tls.mode.required() {
                return Err(tls_failed(server_refused(
                    tls,
                    "its greeting offers no SSL",
                )));
            }
        }
        let password = login.password.as_deref().unwrap_or("").as_bytes();
        reply.clear();
        head(&mut reply, caps, mariadb_caps);
        reply.extend_from_slice(login.user.as_bytes());
        reply.push(0);
        let plugin = match greeting.plugin.as_str() {
            CACHING_SHA2 => CACHING_SHA2,
            _ => NATIVE_PASSWORD,
        };
        let scramble = first_answer(plugin, &greeting.nonce, password);
        reply.push(scramble.len() as u8);
        reply.extend_from_slice(&scramble);
        reply.extend_from_slice(login.database.as_bytes());
        reply.push(0);
        reply.extend_from_slice(plugin.as_bytes());
        reply.push(0);
        conn.send_reply(&reply).await?;
        conn.authenticated(plugin, password, secure).await?;
        conn.broken = false;
        if let Some(wait) = login.sync_wait {
            conn.query_column(&format!("SET SESSION wsrep_sync_wait = {wait}"))
                .await?;
        }
        Ok(conn)
    }

    /// Answers the server until it says the login is good: a switch to another
    /// plugin, caching_sha2_password's second step, an error.
    async fn authenticated(
        &mut self,
        mut plugin: &str,
        password: &[u8],
        secure: bool,
    ) -> Result<()> {
        loop {
            let answer = self.packet().await?;
            match answer.first() {
                Some(0x00) => return Ok(()),
                Some(0xFF) => return Err(server_error(&answer)),
                Some(0xFE) => {
                    // Switch to another plugin: its name, then its data.
                    let body = &answer[1..];
                    let name_end = body.iter().position(|&b| b == 0).unwrap_or(body.len());
                    let name = String::from_utf8_lossy(&body[..name_end]).into_owned();
                    let data = body.get(name_end + 1..).unwrap_or_default();
                    plugin = match name.as_str() {
                        NATIVE_PASSWORD => NATIVE_PASSWORD,
                        CACHING_SHA2 => CACHING_SHA2,
                        ED25519 => ED25519,
                        _ => return Err(Error::Driver(DriverError::UnknownAuthPlugin { name })),
                    };
                    let nonce = match plugin {
                        // MariaDB signs the 32 bytes it sends, a zero byte at the end too.
                        ED25519 if data.len() >= 32 => &data[..32],
                        ED25519 => return Err(unexpected(&answer)),
                        _ => data.strip_suffix(&[0]).unwrap_or(data),
                    };
                    let answer = first_answer(plugin, nonce, password);
                    self.send_reply(&answer).await?;
                }
                Some(0x01) if plugin == CACHING_SHA2 => match answer.get(1) {
                    Some(&FAST_AUTH_DONE) => {}
                    Some(&FULL_AUTH) if secure => {
                        let mut whole = password.to_vec();
                        whole.push(0);
                        self.send_reply(&whole).await?;
                    }
                    Some(&FULL_AUTH) => {
                        return Err(Error::Driver(DriverError::UnknownAuthPlugin {
                            name: format!(
                                "{CACHING_SHA2} (its full login without TLS, which needs the server's RSA key)"
                            ),
                        }));
                    }
                    _ => return Err(unexpected(&answer)),
                },
                Some(0x01) => {
                    return Err(Error::Driver(DriverError::UnknownAuthPlugin {
                        name: format!("{plugin} (more data asked)"),
                    }));
                }
                _ => return Err(unexpected(&answer)),
            }
        }
    }
}

/// What a login of the own wire spoke.
pub enum Spoken {
    Clear,
    /// TLS, and what it was (unknown where only the greeting could be read).
    Tls(Option<TlsFacts>),
}

/// What the server speaks to this login: a login of the own wire (which turns to TLS
/// where the greeting offers it and the login asks) ended cleanly; where the own wire
/// cannot log in, the greeting alone is read (the server then counts an aborted
/// connect).
pub async fn spoken(login: &Login) -> Result<Spoken> {
    match LeanConn::open(login).await {
        Ok(conn) => {
            let spoken = conn.tls_facts();
            conn.quit().await;
            Ok(match spoken {
                Some(facts) => Spoken::Tls(Some(facts)),
                None => Spoken::Clear,
            })
        }
        Err(Error::Driver(DriverError::UnknownAuthPlugin { .. })) => {
            let greeting = async {
                let stream = connect(&login.host, login.port, login.connect_timeout)
                    .await
                    .map_err(io_error)?;
                let mut conn = LeanConn {
                    stream: Stream::new(stream),
                    inbox: Inbox::new(1024),
                    write: Vec::new(),
                    sequence: 0,
                    cache_metadata: false,
                    broken: true,
                };
                Greeting::parse(&conn.packet().await?)
            };
            let greeting = tokio::time::timeout(login.connect_timeout, greeting)
                .await
                .map_err(|_| unexpected(b"no greeting within the connect timeout"))??;
            let offered = greeting.caps & CLIENT_SSL != 0;
            Ok(if offered && login.tls.is_some() {
                Spoken::Tls(None)
            } else {
                Spoken::Clear
            })
        }
        Err(e) => Err(e),
    }
}

/// The fixed head of a login: capabilities, the longest packet, the character set,
/// 19 bytes of filler, MariaDB's capabilities (zero for MySQL).
fn head(reply: &mut Vec<u8>, caps: u32, mariadb_caps: u32) {
    reply.extend_from_slice(&caps.to_le_bytes());
    reply.extend_from_slice(&(MAX_BODY as u32).to_le_bytes());
    reply.push(UTF8MB4);
    reply.extend_from_slice(&[0; 19]);
    reply.extend_from_slice(&mariadb_caps.to_le_bytes());
}

/// A TLS failure as mysql_async's errors carry it: an I/O error of its own words.
fn tls_failed(error: crate::db::DbError) -> Error {
    let kind = match error.kind {
        crate::db::ErrorKind::Timeout => std::io::ErrorKind::TimedOut,
        _ => std::io::ErrorKind::ConnectionRefused,
    };
    io_error(std::io::Error::new(kind, error.message))
}

/// A plugin's answer to the server's nonce; an empty password answers with nothing.
fn first_answer(plugin: &str, nonce: &[u8], password: &[u8]) -> Vec<u8> {
    match plugin {
        _ if password.is_empty() => Vec::new(),
        CACHING_SHA2 => scramble_sha256(nonce, password).map_or_else(Vec::new, |s| s.to_vec()),
        ED25519 => create_response_for_ed25519(password, nonce).to_vec(),
        _ => scramble_native(nonce, password).map_or_else(Vec::new, |s| s.to_vec()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_native_scramble_is_mysqls() {
        // The expected bytes are Python's hashlib on the same formula.
        let nonce = b"abcdefghijklmnopqrst";
        let hex: String = first_answer(NATIVE_PASSWORD, nonce, b"secret")
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(hex, "8817c50fa779daef010ee7577825b0847df9842e");
        assert_eq!(first_answer(NATIVE_PASSWORD, nonce, b""), Vec::<u8>::new());
    }

    #[test]
    fn the_caching_sha2_scramble_is_mysqls() {
        // XOR(SHA256(pw), SHA256(SHA256(SHA256(pw)), nonce)), from Python's hashlib.
        let nonce = b"abcdefghijklmnopqrst";
        let hex: String = first_answer(CACHING_SHA2, nonce, b"secret")
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(
            hex,
            "c76e2898612a4cf042c77fa8c4702c4c64c0c2c557c53c4d75595aaa6abae809"
        );
    }
}
