//! MySQL's packets from a server of the test's own, fed to the own wire: a login it
//! cannot finish names the plugin that asked; and mutated, the greeting, the login, a
//! statement's preparation and its rows each end in a result or an error, never a
//! panic, and a connection that met what it could not read is never used again.

use std::time::Duration;

use super::packets::{Greeting, column_is_bytes, lenenc_bytes, packet_len, server_error};
use super::{LeanConn, Login, Param};
use crate::db::fuzz::{
    Mutator, calls_on_mutated_replies, dropped, for_a_while, greeting_server, runtime,
};

/// A packet of `body` with sequence number `sequence`.
fn packet(sequence: u8, body: &[u8]) -> Vec<u8> {
    let mut out = (body.len() as u32).to_le_bytes()[..3].to_vec();
    out.push(sequence);
    out.extend_from_slice(body);
    out
}

/// MariaDB's greeting: protocol 10, its version, a nonce, its capabilities, no SSL.
fn greeting() -> Vec<u8> {
    let mut body = vec![10];
    body.extend_from_slice(b"10.11.19-MariaDB\0");
    body.extend_from_slice(&7u32.to_le_bytes());
    body.extend_from_slice(b"abcdefgh\0");
    let caps: u32 = 0xF7FF & !(1 << 11) | (1 << 19) | (1 << 15);
    body.extend_from_slice(&(caps as u16).to_le_bytes());
    body.push(45);
    body.extend_from_slice(&2u16.to_le_bytes());
    body.extend_from_slice(&((caps >> 16) as u16).to_le_bytes());
    body.push(21);
    body.extend_from_slice(&[0; 6]);
    body.extend_from_slice(&0u32.to_le_bytes());
    body.extend_from_slice(b"ijklmnopqrst\0");
    body.extend_from_slice(b"mysql_native_password\0");
    packet(0, &body)
}

fn ok(sequence: u8) -> Vec<u8> {
    packet(sequence, &[0, 0, 0, 2, 0, 0, 0])
}

fn eof(sequence: u8) -> Vec<u8> {
    packet(sequence, &[0xFE, 0, 0, 2, 0])
}

/// A column definition of a blob named `v`.
fn blob_column(sequence: u8) -> Vec<u8> {
    let mut body = Vec::new();
    for text in ["def", "hatshop", "kv", "kv", "v", "v"] {
        body.push(text.len() as u8);
        body.extend_from_slice(text.as_bytes());
    }
    body.push(0x0C);
    body.extend_from_slice(&63u16.to_le_bytes());
    body.extend_from_slice(&16_777_215u32.to_le_bytes());
    body.push(0xFC);
    body.extend_from_slice(&[0x90, 0, 0, 0, 0]);
    packet(sequence, &body)
}

/// COM_STMT_PREPARE's answer: statement 1, one column, one parameter.
fn prepared() -> Vec<u8> {
    let mut head = vec![0];
    head.extend_from_slice(&1u32.to_le_bytes());
    head.extend_from_slice(&1u16.to_le_bytes());
    head.extend_from_slice(&1u16.to_le_bytes());
    head.extend_from_slice(&[0, 0, 0]);
    [
        packet(1, &head),
        blob_column(2),
        eof(3),
        blob_column(4),
        eof(5),
    ]
    .concat()
}

/// An execution's rows: one column, one row holding `value`.
fn rows() -> Vec<u8> {
    let mut row = vec![0, 0, 5];
    row.extend_from_slice(b"value");
    [
        packet(1, &[1]),
        blob_column(2),
        eof(3),
        packet(4, &row),
        eof(5),
    ]
    .concat()
}

fn error() -> Vec<u8> {
    let mut body = vec![0xFF, 0x26, 0x04, b'#'];
    body.extend_from_slice(b"23000Duplicate entry");
    packet(1, &body)
}

fn login(port: u16) -> Login {
    Login {
        host: "127.0.0.1".into(),
        port,
        user: "bench".into(),
        password: None,
        database: "hatshop".into(),
        sync_wait: None,
        connect_timeout: Duration::from_millis(500),
        tls: None,
    }
}

#[test]
fn the_packets_unmutated_read_as_the_value_they_hold() {
    let port = greeting_server(greeting(), vec![ok(2), prepared(), rows()]);
    let value = runtime().block_on(async {
        let mut conn = LeanConn::open(&login(port)).await.unwrap();
        let mut statement = conn.prepare("SELECT v FROM kv WHERE k = ?").await.unwrap();
        let reply = conn
            .execute(&mut statement, &[Param::Bytes(b"key")])
            .await
            .unwrap();
        assert!(!conn.broken);
        reply.value
    });
    assert_eq!(value.as_deref(), Some(&b"value"[..]));
}

/// An authentication switch to `plugin` with `data`.
fn switch(plugin: &str, data: &[u8]) -> Vec<u8> {
    let mut body = vec![0xFE];
    body.extend_from_slice(plugin.as_bytes());
    body.push(0);
    body.extend_from_slice(data);
    packet(2, &body)
}

#[test]
fn a_login_the_own_wire_cannot_finish_says_which_plugin_asked() {
    let refused = |replies: Vec<Vec<u8>>| {
        let port = greeting_server(greeting(), replies);
        let mut login = login(port);
        login.password = Some("secret".into());
        match runtime().block_on(LeanConn::open(&login)) {
            Err(mysql_async::Error::Driver(mysql_async::DriverError::UnknownAuthPlugin {
                name,
            })) => name,
            Err(other) => panic!("{other}"),
            Ok(_) => panic!("logged in"),
        }
    };
    assert_eq!(refused(vec![switch("dialog", b"Password: ")]), "dialog");
    // caching_sha2_password's full login wants TLS (or the server's RSA key).
    let full_login = vec![
        switch("caching_sha2_password", b"abcdefghijklmnopqrst\0"),
        packet(4, &[1, 4]),
    ];
    assert!(refused(full_login).starts_with("caching_sha2_password (its full login without TLS"));
    // Its fast path needs neither.
    let fast = vec![
        switch("caching_sha2_password", b"abcdefghijklmnopqrst\0"),
        [packet(4, &[1, 3]), ok(5)].concat(),
    ];
    let port = greeting_server(greeting(), fast);
    let mut login = login(port);
    login.password = Some("secret".into());
    assert!(runtime().block_on(LeanConn::open(&login)).is_ok());
}

#[test]
fn mutated_packets_are_framed_and_read_without_a_panic() {
    let valid = [greeting(), ok(2), prepared(), rows(), error()].concat();
    let mut mutator = Mutator::new(5);
    let ran = for_a_while(0.5, 10_000, |_| {
        let bytes = mutator.mutate(&valid);
        let mut rest = &bytes[..];
        while let Ok(Some((len, _))) = packet_len(rest) {
            let body = &rest[4..4 + len];
            let _ = Greeting::parse(body);
            let _ = column_is_bytes(body);
            let _ = lenenc_bytes(body, &mut 1);
            if body.first() == Some(&0xFF) {
                let _ = server_error(body);
            }
            rest = &rest[4 + len..];
        }
    });
    assert!(ran >= 10_000);
}

#[test]
fn a_connection_given_mutated_packets_ends_each_call_and_drops_what_it_could_not_read() {
    calls_on_mutated_replies(6, |round, mutator, runtime| {
        let (mut greeting, mut login, mut prepare, mut reply) =
            (greeting(), ok(2), prepared(), rows());
        match round % 4 {
            0 => greeting = mutator.mutate(&greeting),
            1 => login = mutator.mutate(&login),
            2 => prepare = mutator.mutate(&prepare),
            _ if round % 8 == 3 => reply = mutator.mutate(&reply),
            _ => reply = mutator.mutate(&error()),
        }
        let port = greeting_server(greeting, vec![login, prepare, reply]);
        runtime.block_on(async {
            let mut conn = LeanConn::open(&self::login(port)).await.ok()?;
            let call = async {
                let mut statement = conn.prepare("SELECT v FROM kv WHERE k = ?").await?;
                conn.execute(&mut statement, &[Param::Bytes(b"key")]).await
            };
            let ended = tokio::time::timeout(Duration::from_millis(200), call).await;
            let servers_own = |e: &mysql_async::Error| matches!(e, mysql_async::Error::Server(_));
            Some(dropped(ended, servers_own, conn.broken))
        })
    });
}
