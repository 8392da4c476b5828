//! Statements are prepared once per connection, however many operations run: a proxy
//! (test code) between hatshop and the PostgreSQL ./test.sh starts counts the Parse
//! messages of the wire protocol, the only way a statement gets prepared. (MariaDB's
//! count, `Com_stmt_prepare`, is checked in tests/mysql.rs.)

mod common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Counts PostgreSQL frontend messages of one type as they pass.
#[derive(Default)]
struct FrontendParser {
    /// Bytes of a message header (type and length) or an untyped start-up message.
    pending: Vec<u8>,
    /// Bytes of the current message's body still to skip.
    skip: usize,
    /// Past the start-up message: messages carry a type byte from then on.
    typed: bool,
}

impl FrontendParser {
    /// Feeds `bytes`; adds one to `parses` for every Parse ('P') message.
    fn feed(&mut self, mut bytes: &[u8], parses: &AtomicU64) {
        while !bytes.is_empty() {
            if self.skip > 0 {
                let n = self.skip.min(bytes.len());
                self.skip -= n;
                bytes = &bytes[n..];
                continue;
            }
            let header = if self.typed { 5 } else { 8 };
            let n = (header - self.pending.len()).min(bytes.len());
            self.pending.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
            if self.pending.len() < header {
                continue;
            }
            let at = header - 4;
            let length = u32::from_be_bytes(self.pending[at..header].try_into().unwrap()) as usize;
            if self.typed {
                if self.pending[0] == b'P' {
                    parses.fetch_add(1, Ordering::Relaxed);
                }
                self.skip = length - 4;
            } else {
                // Start-up, SSL or GSS request: int32 length, int32 code, then the rest.
                let code = u32::from_be_bytes(self.pending[..4].try_into().unwrap());
                self.skip = code as usize - 8;
                let request = u32::from_be_bytes(self.pending[4..8].try_into().unwrap());
                self.typed = !matches!(request, 80_877_103 | 80_877_104);
            }
            self.pending.clear();
        }
    }
}

/// Listens on a free loopback port, forwards each connection to `upstream`, and counts
/// the Parse messages clients send.
fn counting_proxy(upstream: String) -> (u16, Arc<AtomicU64>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let parses = Arc::new(AtomicU64::new(0));
    let counted = parses.clone();
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(mut client) = client else { return };
            let Ok(mut server) = TcpStream::connect(&upstream) else {
                continue;
            };
            let (mut client_in, mut server_out) =
                (client.try_clone().unwrap(), server.try_clone().unwrap());
            let counted = counted.clone();
            std::thread::spawn(move || {
                let mut parser = FrontendParser::default();
                let mut buffer = [0u8; 16 * 1024];
                while let Ok(n) = client_in.read(&mut buffer) {
                    if n == 0 || server_out.write_all(&buffer[..n]).is_err() {
                        break;
                    }
                    parser.feed(&buffer[..n], &counted);
                }
                let _ = server_out.shutdown(std::net::Shutdown::Write);
            });
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut server, &mut client);
                let _ = client.shutdown(std::net::Shutdown::Write);
            });
        }
    });
    (port, parses)
}

#[test]
fn the_parser_counts_parse_messages_across_chunks() {
    let parses = AtomicU64::new(0);
    let mut parser = FrontendParser::default();
    let mut stream = Vec::new();
    // SSL request, start-up message, then Parse, Bind, Parse.
    stream.extend_from_slice(&8u32.to_be_bytes());
    stream.extend_from_slice(&80_877_103u32.to_be_bytes());
    stream.extend_from_slice(&12u32.to_be_bytes());
    stream.extend_from_slice(&196_608u32.to_be_bytes());
    stream.extend_from_slice(b"user");
    for (kind, body) in [
        (b'P', &b"s0\0SELECT 1\0\0\0"[..]),
        (b'B', b"xy"),
        (b'P', b""),
    ] {
        stream.push(kind);
        stream.extend_from_slice(&(body.len() as u32 + 4).to_be_bytes());
        stream.extend_from_slice(body);
    }
    for chunk in stream.chunks(3) {
        parser.feed(chunk, &parses);
    }
    assert_eq!(parses.load(Ordering::Relaxed), 2);
}

#[test]
#[ignore = "needs a live PostgreSQL: ./test.sh starts one"]
fn postgres_prepares_each_statement_once_per_connection() {
    let db = common::url("HATSHOP_TEST_POSTGRES");
    let address = db
        .trim_start_matches("postgres://")
        .split_once('@')
        .map_or("127.0.0.1:5432", |(_, rest)| {
            rest.split('/').next().unwrap()
        });
    let (port, parses) = counting_proxy(address.to_string());
    let proxied = format!("postgres://postgres@127.0.0.1:{port}/hatshop");
    let grew = common::prepares_by_run(&proxied, &[], || parses.load(Ordering::Relaxed));
    // Eight times the operations, the same prepares: each connection prepares its
    // statements when it opens.
    assert!(
        grew[0] > 0,
        "no Parse message seen: is the proxy in the way? {grew:?}"
    );
    assert_eq!(grew[0], grew[1], "prepares grew with operations: {grew:?}");
}
