//! Logging in over hatshop's own wire, as libpq does: TLS first where sslmode asks
//! (SSLRequest), then the startup message, then whatever the server asks for: nothing
//! (trust), the password in clear, its MD5, or SCRAM-SHA-256 (PostgreSQL's default
//! since 14), without channel binding as the driver here does. A method it does not
//! speak (GSSAPI, SSPI) leaves the connection to tokio-postgres.

use postgres_protocol::authentication::md5_hash;
use postgres_protocol::authentication::sasl::{ChannelBinding, SCRAM_SHA_256, ScramSha256};

use super::frames::{auth_request, garbled, mechanisms, server_error};
use super::{LeanConn, Login, PROTOCOL, Result, begin, end, io_error, put_str, unexpected};
use crate::db::tls::server_refused;
use crate::db::wire::{Socket, within};
use crate::db::{DbError, ErrorKind};

/// SSLRequest's code.
const SSL_REQUEST: i32 = 80_877_103;

/// A connection logged in, or why the own wire cannot log in there.
pub enum Opened {
    Conn(LeanConn),
    /// The server asks for a method hatshop's own wire does not speak.
    Unserved(String),
}

impl LeanConn {
    /// Opens, turns to TLS where asked, and logs in, within the connect timeout.
    pub async fn open(login: &Login) -> Result<Opened> {
        let handshake = Self::log_in(login);
        within(login.connect_timeout, "the PostgreSQL handshake", handshake).await
    }

    async fn log_in(login: &Login) -> Result<Opened> {
        let socket = Socket::open(&login.host, login.port, login.connect_timeout)
            .await
            .map_err(io_error)?;
        let mut conn = LeanConn { socket };
        if let Some(tls) = &login.tls {
            if conn.ask_for_tls().await? {
                conn.socket.start_tls(tls).await?;
            } else if tls.mode.required() {
                return Err(server_refused(tls, "it answered N to SSLRequest"));
            }
        }
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
        if let Some(unserved) = conn.authenticate(login).await? {
            return Ok(Opened::Unserved(unserved));
        }
        conn.ready("login").await?;
        conn.socket.answered();
        Ok(Opened::Conn(conn))
    }

    /// Sends SSLRequest: whether the server turns to TLS ('S') or not ('N').
    async fn ask_for_tls(&mut self) -> Result<bool> {
        let out = &mut self.socket.out;
        out.clear();
        out.extend_from_slice(&8i32.to_be_bytes());
        out.extend_from_slice(&SSL_REQUEST.to_be_bytes());
        self.send().await?;
        while self.socket.inbox.unread().is_empty() {
            self.socket.fill().await.map_err(io_error)?;
        }
        let answer = self.socket.inbox.unread();
        let yes = match answer[0] {
            // Bytes after the 'S' came before TLS and could be anyone's.
            b'S' if answer.len() == 1 => true,
            b'S' => return Err(garbled("bytes before its TLS handshake".into())),
            b'N' => false,
            b'E' => return Err(self.message().await.map(|(_, body)| server_error(&body))?),
            other => return Err(unexpected(other, "the answer to SSLRequest")),
        };
        self.socket.inbox.take(1);
        Ok(yes)
    }

    /// Answers what the server asks until it says the login is good; `Some(why)`
    /// where it asks for a method the own wire does not speak.
    async fn authenticate(&mut self, login: &Login) -> Result<Option<String>> {
        let mut scram: Option<ScramSha256> = None;
        loop {
            let (tag, body) = self.message().await?;
            match tag {
                b'R' => {}
                b'E' => return Err(server_error(&body)),
                _ => return Err(unexpected(tag, "login")),
            }
            let (code, data) = auth_request(&body)?;
            match code {
                0 => return Ok(None),
                3 => {
                    let password = password(login)?;
                    self.password_message(password.as_bytes()).await?;
                }
                5 => {
                    let salt: [u8; 4] = data
                        .get(..4)
                        .and_then(|s| s.try_into().ok())
                        .ok_or_else(|| garbled("an MD5 request without its salt".into()))?;
                    let hash = md5_hash(login.user.as_bytes(), password(login)?.as_bytes(), salt);
                    self.password_message(hash.as_bytes()).await?;
                }
                10 => {
                    let offered = mechanisms(data);
                    if !offered.iter().any(|m| m == SCRAM_SHA_256) {
                        return Ok(Some(format!(
                            "PostgreSQL offers SASL by {} only",
                            offered.join(", ")
                        )));
                    }
                    let exchange = ScramSha256::new(
                        password(login)?.as_bytes(),
                        ChannelBinding::unsupported(),
                    );
                    self.sasl_initial(exchange.message()).await?;
                    scram = Some(exchange);
                }
                11 | 12 => {
                    let exchange = scram
                        .as_mut()
                        .ok_or_else(|| garbled("a SCRAM step before SCRAM began".into()))?;
                    let step = if code == 11 {
                        exchange.update(data)
                    } else {
                        exchange.finish(data)
                    };
                    step.map_err(|e| {
                        DbError::new(
                            ErrorKind::Connection,
                            format!("PostgreSQL's SCRAM-SHA-256 exchange failed: {e}"),
                        )
                    })?;
                    if code == 11 {
                        let reply = exchange.message().to_vec();
                        self.sasl_response(&reply).await?;
                    }
                }
                2 | 7 | 9 => {
                    let method = match code {
                        2 => "Kerberos V5",
                        7 => "GSSAPI",
                        _ => "SSPI",
                    };
                    return Ok(Some(format!("PostgreSQL asks for {method}")));
                }
                other => {
                    return Ok(Some(format!(
                        "PostgreSQL asks for authentication method {other}"
                    )));
                }
            }
        }
    }

    async fn password_message(&mut self, password: &[u8]) -> Result<()> {
        let out = &mut self.socket.out;
        out.clear();
        let at = begin(out, b'p');
        out.extend_from_slice(password);
        out.push(0);
        end(out, at);
        self.send().await
    }

    async fn sasl_initial(&mut self, first: &[u8]) -> Result<()> {
        let out = &mut self.socket.out;
        out.clear();
        let at = begin(out, b'p');
        put_str(out, SCRAM_SHA_256);
        out.extend_from_slice(&(first.len() as i32).to_be_bytes());
        out.extend_from_slice(first);
        end(out, at);
        self.send().await
    }

    async fn sasl_response(&mut self, reply: &[u8]) -> Result<()> {
        let out = &mut self.socket.out;
        out.clear();
        let at = begin(out, b'p');
        out.extend_from_slice(reply);
        end(out, at);
        self.send().await
    }
}

/// The password the server asked for, or a line saying none was found.
fn password(login: &Login) -> Result<&str> {
    login.password.as_deref().ok_or_else(|| {
        DbError::new(
            ErrorKind::Connection,
            format!(
                "PostgreSQL asks {} for a password, and none was given (the URL, PGPASSWORD, PGPASSFILE or ~/.pgpass)",
                login.user
            ),
        )
    })
}
