//! PostgreSQL's replies, mutated, fed to the own wire: framed, logged in and executed
//! against, each ends in a result or an error, never a panic, and a connection that
//! met what it could not read is never used again.

use std::time::Duration;

use super::frames::{auth_request, command_rows, first_column, frame, mechanisms, server_error};
use super::{LeanConn, Login, Opened};
use crate::db::fuzz::{
    Mutator, calls_on_mutated_replies, dropped, for_a_while, replying_server, runtime,
};

fn message(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    out.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
    out.extend_from_slice(body);
    out
}

/// AuthenticationOk, a parameter, the backend's key, ReadyForQuery.
fn login_ok() -> Vec<u8> {
    let mut out = message(b'R', &0i32.to_be_bytes());
    out.extend(message(b'S', b"server_version\x0015.18\x00"));
    out.extend(message(b'K', &[0, 0, 0, 7, 0, 0, 0, 9]));
    out.extend(message(b'Z', b"I"));
    out
}

/// A SCRAM request: the mechanisms offered.
fn sasl_request() -> Vec<u8> {
    let mut body = 10i32.to_be_bytes().to_vec();
    body.extend_from_slice(b"SCRAM-SHA-256-PLUS\x00SCRAM-SHA-256\x00\x00");
    message(b'R', &body)
}

/// BindComplete, a row of one value, SELECT 1, ReadyForQuery.
fn select_reply() -> Vec<u8> {
    let mut row = 1i16.to_be_bytes().to_vec();
    row.extend_from_slice(&5i32.to_be_bytes());
    row.extend_from_slice(b"value");
    let mut out = message(b'2', b"");
    out.extend(message(b'D', &row));
    out.extend(message(b'C', b"SELECT 1\x00"));
    out.extend(message(b'Z', b"I"));
    out
}

fn error_reply() -> Vec<u8> {
    let mut out = message(b'E', b"SERROR\x00C23505\x00Mduplicate key\x00\x00");
    out.extend(message(b'Z', b"I"));
    out
}

fn login(port: u16) -> Login {
    Login {
        host: "127.0.0.1".into(),
        port,
        user: "bench".into(),
        password: None,
        database: "hatshop".into(),
        connect_timeout: Duration::from_millis(500),
        tls: None,
    }
}

#[test]
fn the_replies_unmutated_read_as_the_value_they_hold() {
    let port = replying_server(vec![login_ok(), select_reply(), error_reply()]);
    runtime().block_on(async {
        let Ok(Opened::Conn(mut conn)) = LeanConn::open(&login(port)).await else {
            panic!("no login");
        };
        let reply = conn.execute("kv_select", &[b"key"]).await.unwrap();
        assert_eq!(
            (reply.rows, reply.value.as_deref()),
            (1, Some(&b"value"[..]))
        );
        let error = conn.execute("kv_insert", &[b"key"]).await.err().unwrap();
        assert_eq!(error.code.as_deref(), Some("23505"));
        assert!(!conn.socket.busy());
    });
}

#[test]
fn mutated_bytes_are_framed_and_read_without_a_panic() {
    let valid = [login_ok(), sasl_request(), select_reply(), error_reply()].concat();
    let mut mutator = Mutator::new(1);
    let ran = for_a_while(0.5, 10_000, |_| {
        let bytes = mutator.mutate(&valid);
        let mut rest = &bytes[..];
        while let Ok(Some((tag, whole))) = frame(rest) {
            let body = &rest[5..whole];
            match tag {
                b'D' => {
                    let _ = first_column(body);
                }
                b'C' => {
                    let _ = command_rows(body);
                }
                b'E' => {
                    let _ = server_error(body);
                }
                b'R' => {
                    if let Ok((_, data)) = auth_request(body) {
                        let _ = mechanisms(data);
                    }
                }
                _ => {}
            }
            rest = &rest[whole..];
        }
    });
    assert!(ran >= 10_000);
}

#[test]
fn a_connection_given_mutated_replies_ends_each_call_and_drops_what_it_could_not_read() {
    calls_on_mutated_replies(2, |round, mutator, runtime| {
        // Every other round mutates the login, the others the reply to a read.
        let (login_reply, reply) = if round % 2 == 0 {
            (mutator.mutate(&login_ok()), select_reply())
        } else {
            let valid = if round % 3 == 0 {
                error_reply()
            } else {
                select_reply()
            };
            (login_ok(), mutator.mutate(&valid))
        };
        let port = replying_server(vec![login_reply, reply]);
        runtime.block_on(async {
            let Ok(Opened::Conn(mut conn)) = LeanConn::open(&login(port)).await else {
                return None;
            };
            let read = conn.execute("kv_select", &[b"key"]);
            let ended = tokio::time::timeout(Duration::from_millis(200), read).await;
            // The server's own error leaves the connection in step.
            let servers_own = |e: &crate::db::DbError| e.code.is_some();
            Some(dropped(ended, servers_own, conn.socket.busy()))
        })
    });
}
