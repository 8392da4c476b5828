//! A TCP proxy (test code) between hatshop and a real server that, once armed, spoils
//! some of what the server sends: one bit flipped in every Nth chunk, or a stray CRLF
//! put in front of it. What the client sends passes untouched.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// How the proxy spoils a chunk.
#[derive(Clone, Copy, Debug)]
pub enum Spoil {
    FlipBit,
    CrlfFirst,
}

/// A running proxy: its port, and how much it spoiled.
pub struct GarblingProxy {
    pub port: u16,
    armed: Arc<AtomicBool>,
    spoiled: Arc<AtomicU64>,
}

impl GarblingProxy {
    /// A proxy to `upstream` (`host:port`) that, once armed, spoils one server chunk
    /// in `every`, as `spoil` says.
    pub fn start(upstream: &str, every: u64, spoil: Spoil) -> GarblingProxy {
        Self::listening_at("127.0.0.1:0", upstream, every, spoil)
    }

    /// A proxy that never spoils, listening at `listen` (`ip:port`): the server
    /// reached at another address than its own.
    pub fn forwarder(listen: &str, upstream: &str) -> GarblingProxy {
        Self::listening_at(listen, upstream, u64::MAX, Spoil::FlipBit)
    }

    fn listening_at(listen: &str, upstream: &str, every: u64, spoil: Spoil) -> GarblingProxy {
        let listener = TcpListener::bind(listen).unwrap();
        let port = listener.local_addr().unwrap().port();
        let armed = Arc::new(AtomicBool::new(false));
        let spoiled = Arc::new(AtomicU64::new(0));
        let chunks = Arc::new(AtomicU64::new(0));
        let upstream = upstream.to_string();
        let (armed_in, spoiled_in) = (armed.clone(), spoiled.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { return };
                let Ok(server) = TcpStream::connect(&upstream) else {
                    continue;
                };
                let _ = (client.set_nodelay(true), server.set_nodelay(true));
                let (client_w, server_r) =
                    (client.try_clone().unwrap(), server.try_clone().unwrap());
                std::thread::spawn(move || pass(client, server));
                let (armed, spoiled, chunks) =
                    (armed_in.clone(), spoiled_in.clone(), chunks.clone());
                std::thread::spawn(move || {
                    let mut buf = vec![0u8; 64 * 1024];
                    let (mut from, mut to) = (server_r, client_w);
                    loop {
                        let n = match from.read(&mut buf) {
                            Ok(0) | Err(_) => break,
                            Ok(n) => n,
                        };
                        let count = chunks.fetch_add(1, Ordering::Relaxed);
                        let mut chunk = buf[..n].to_vec();
                        if armed.load(Ordering::Relaxed) && count % every == 0 {
                            match spoil {
                                Spoil::FlipBit => {
                                    // Which byte and bit, from the count: the same run, the same spoils.
                                    let at =
                                        (count.wrapping_mul(2_654_435_761) % n as u64) as usize;
                                    chunk[at] ^= 1 << (count % 8);
                                }
                                Spoil::CrlfFirst => chunk.splice(0..0, *b"\r\n").for_each(drop),
                            }
                            spoiled.fetch_add(1, Ordering::Relaxed);
                        }
                        if to.write_all(&chunk).is_err() {
                            break;
                        }
                    }
                    let _ = to.shutdown(Shutdown::Both);
                    let _ = from.shutdown(Shutdown::Both);
                });
            }
        });
        GarblingProxy {
            port,
            armed,
            spoiled,
        }
    }

    /// From now on, spoil.
    pub fn arm(&self) {
        self.armed.store(true, Ordering::Relaxed);
    }

    /// Chunks spoiled so far.
    pub fn spoiled(&self) -> u64 {
        self.spoiled.load(Ordering::Relaxed)
    }
}

/// Copies client to server untouched until either side ends.
fn pass(mut from: TcpStream, mut to: TcpStream) {
    let _ = std::io::copy(&mut from, &mut to);
    let _ = to.shutdown(Shutdown::Both);
    let _ = from.shutdown(Shutdown::Both);
}
