//! What hatshop's own protocol clients (PostgreSQL's, MySQL's, Redis's) share: opening
//! a socket within a deadline, moving it to the event loop or runtime of the lane that
//! uses it, the bytes read and not yet taken, and a connection per lane. Each client
//! speaks its protocol over these; none of this knows a protocol.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;
use tokio::runtime::{Handle, Id};
use tokio::sync::{Mutex, MutexGuard};

use super::tls::{self, Session, Tls, TlsFacts};
use super::{DbError, ErrorKind};
use crate::event_loop::LoopTcp;

/// A TCP connection to `host:port` with Nagle off, or a `TimedOut` error naming where
/// after `limit`.
pub async fn connect(host: &str, port: u16, limit: Duration) -> io::Result<TcpStream> {
    let stream = tokio::time::timeout(limit, TcpStream::connect((host, port)))
        .await
        .map_err(|_| {
            io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "no connection to {host}:{port} within {} s",
                    limit.as_secs_f64()
                ),
            )
        })??;
    stream.set_nodelay(true)?;
    Ok(stream)
}

/// A socket, what watches it (the event loop of the lane thread using it, or an async
/// runtime) and its TLS session, if it has one. A lane on a thread of its own (the
/// runner's lane threads) moves a socket opened elsewhere (in setup, or by another
/// lane) to its own thread's loop at its next request, so that the server's answer
/// wakes the lane's thread rather than another's, which would then hand the wake-up
/// over. The TLS session is state beside the socket and stays with it.
pub struct Stream {
    /// `None` only after a move failed; the connection is then lost.
    tcp: Option<Tcp>,
    home: Home,
    tls: Option<Session>,
}

/// A connection as the protocols read and write it, wherever it is watched.
pub enum Tcp {
    Runtime(TcpStream),
    Loop(LoopTcp),
}

/// A connection's socket as its protocol reads and writes it: through its TLS
/// session where it has one.
pub struct Wire<'a> {
    tcp: &'a mut Tcp,
    tls: Option<&'a mut Session>,
}

/// What watches a socket.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Home {
    Loop(usize),
    /// A runtime (none outside one).
    Runtime(Option<Id>),
}

impl Stream {
    /// `tcp`, watched by the calling runtime.
    pub fn new(tcp: TcpStream) -> Stream {
        Stream {
            tcp: Some(Tcp::Runtime(tcp)),
            home: Home::Runtime(runtime_here()),
            tls: None,
        }
    }

    /// The socket, moved first to the calling thread's loop or runtime if another
    /// watches it: for the start of a request.
    pub fn here(&mut self) -> io::Result<Wire<'_>> {
        let here = match crate::event_loop::here() {
            Some(id) => Home::Loop(id),
            None => Home::Runtime(runtime_here()),
        };
        if here != self.home {
            let std = match self.tcp.take().ok_or_else(lost)? {
                Tcp::Runtime(tcp) => tcp.into_std()?,
                Tcp::Loop(tcp) => tcp.into_std()?,
            };
            self.tcp = Some(match here {
                Home::Loop(_) => Tcp::Loop(LoopTcp::adopt(std)?),
                Home::Runtime(_) => Tcp::Runtime(TcpStream::from_std(std)?),
            });
            self.home = here;
        }
        self.wire()
    }

    /// The socket where it is: for the rest of a request that [`Stream::here`] began.
    pub fn wire(&mut self) -> io::Result<Wire<'_>> {
        let tcp = self.tcp.as_mut().ok_or_else(lost)?;
        Ok(Wire {
            tcp,
            tls: self.tls.as_mut(),
        })
    }

    /// Turns the connection to TLS here (where its protocol says so): the handshake,
    /// within the caller's deadline.
    pub async fn start_tls(&mut self, tls: &Tls) -> Result<(), DbError> {
        let wire = self
            .here()
            .map_err(|e| DbError::new(ErrorKind::Connection, e.to_string()))?;
        let session = tls::handshake(wire.tcp, tls).await?;
        self.tls = Some(session);
        Ok(())
    }

    /// The TLS the connection speaks, if any.
    pub fn tls_facts(&self) -> Option<TlsFacts> {
        self.tls.as_ref().map(Session::facts)
    }

    /// Writes `goodbye` (with TLS's close_notify after it) and closes.
    pub async fn close_with(&mut self, goodbye: &[u8]) {
        let Ok(mut wire) = self.here() else {
            return;
        };
        let _ = wire.write_all(goodbye).await;
        if let Some(session) = wire.tls.as_deref_mut() {
            session.close();
        }
        let _ = wire.flush().await;
        let _ = wire.shutdown().await;
    }
}

impl AsyncRead for Wire<'_> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let wire = self.get_mut();
        match wire.tls.as_deref_mut() {
            Some(session) => session.poll_read(wire.tcp, cx, buf),
            None => Pin::new(&mut *wire.tcp).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Wire<'_> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        let wire = self.get_mut();
        match wire.tls.as_deref_mut() {
            Some(session) => session.poll_write(wire.tcp, cx, bytes),
            None => Pin::new(&mut *wire.tcp).poll_write(cx, bytes),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let wire = self.get_mut();
        match wire.tls.as_deref_mut() {
            Some(session) => session.poll_send(wire.tcp, cx),
            None => Pin::new(&mut *wire.tcp).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.get_mut().tcp).poll_shutdown(cx)
    }
}

impl AsyncRead for Tcp {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Tcp::Runtime(tcp) => Pin::new(tcp).poll_read(cx, buf),
            Tcp::Loop(tcp) => Pin::new(tcp).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Tcp {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Tcp::Runtime(tcp) => Pin::new(tcp).poll_write(cx, bytes),
            Tcp::Loop(tcp) => Pin::new(tcp).poll_write(cx, bytes),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Tcp::Runtime(tcp) => Pin::new(tcp).poll_flush(cx),
            Tcp::Loop(tcp) => Pin::new(tcp).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Tcp::Runtime(tcp) => Pin::new(tcp).poll_shutdown(cx),
            Tcp::Loop(tcp) => Pin::new(tcp).poll_shutdown(cx),
        }
    }
}

/// The calling runtime (none outside one).
fn runtime_here() -> Option<Id> {
    Handle::try_current().ok().map(|runtime| runtime.id())
}

fn lost() -> io::Error {
    io::Error::new(
        io::ErrorKind::NotConnected,
        "the connection was lost moving it to the lane's runtime",
    )
}

/// Opens a connection to `host:port` and runs a TLS handshake on it at once (for
/// protocols that begin with TLS, as CQL's does), then closes it: what TLS it spoke,
/// or one line saying why it could not, within `limit`. A store whose driver says a
/// failed handshake in words of its own asks this first.
pub async fn probe(
    host: &str,
    port: u16,
    tls: &Tls,
    limit: std::time::Duration,
) -> Result<TlsFacts, DbError> {
    let attempt = async {
        let mut tcp = connect(host, port, limit)
            .await
            .map_err(|e| DbError::new(super::classify::io_kind(&e), e.to_string()))?;
        let session = tls::handshake(&mut tcp, tls).await?;
        Ok(session.facts())
    };
    let what = format!(
        "the TLS handshake with {} (a port without TLS never answers one)",
        tls.target
    );
    within(limit, &what, attempt).await
}

/// `count` full TLS handshakes, one after another, with `host:port` (a port that begins
/// with TLS), checking its certificate against `ca` and its name: what they took, for
/// the benchmark that sets hatshop's TLS beside OpenSSL's (`bench/tls_handshake.rs`).
pub async fn handshake_cost(
    host: &str,
    port: u16,
    ca: &std::path::Path,
    count: u64,
) -> Result<Vec<TlsFacts>, DbError> {
    let settings = tls::TlsSettings {
        mode: tls::TlsMode::VerifyFull,
        mode_source: "verify-full".into(),
        ca: Some(tls::NamedFile {
            setting: "ca",
            path: ca.to_path_buf(),
        }),
        cert: None,
        key: None,
    };
    let tls = settings
        .client(host, port)?
        .expect("verify-full is a mode with TLS");
    let mut spoken = Vec::with_capacity(count as usize);
    for _ in 0..count {
        spoken.push(probe(host, port, &tls, std::time::Duration::from_secs(10)).await?);
    }
    Ok(spoken)
}

/// `login` (a connection opened and logged in), or a timeout saying no answer came
/// to `what` within `limit`.
pub async fn within<T>(
    limit: Duration,
    what: &str,
    login: impl Future<Output = Result<T, DbError>>,
) -> Result<T, DbError> {
    tokio::time::timeout(limit, login)
        .await
        .unwrap_or_else(|_| {
            Err(DbError::new(
                ErrorKind::Timeout,
                format!("no answer to {what} within {} s", limit.as_secs_f64()),
            ))
        })
}

/// One connection of an own protocol client: its socket, the bytes read and not yet
/// taken, the request being written, and whether a request went unanswered (its call
/// was cancelled), which leaves the connection unusable.
pub struct Socket {
    stream: Stream,
    /// What was read and not taken yet.
    pub inbox: Inbox,
    /// The next request, written by the protocol.
    pub out: Vec<u8>,
    busy: bool,
}

impl Socket {
    /// Connects to `host:port` within `limit`.
    pub async fn open(host: &str, port: u16, limit: Duration) -> io::Result<Socket> {
        Ok(Socket {
            stream: Stream::new(connect(host, port, limit).await?),
            inbox: Inbox::new(8 * 1024),
            out: Vec::with_capacity(256),
            busy: false,
        })
    }

    /// Whether a request sent is still unanswered.
    pub fn busy(&self) -> bool {
        self.busy
    }

    /// Sends the request in `out`; it is unanswered until [`Socket::answered`].
    pub async fn send(&mut self) -> io::Result<()> {
        self.busy = true;
        let mut wire = self.stream.here()?;
        wire.write_all(&self.out).await?;
        wire.flush().await
    }

    /// Turns the connection to TLS (see [`Stream::start_tls`]).
    pub async fn start_tls(&mut self, tls: &Tls) -> Result<(), DbError> {
        self.stream.start_tls(tls).await
    }

    /// The TLS the connection speaks, if any.
    pub fn tls_facts(&self) -> Option<TlsFacts> {
        self.stream.tls_facts()
    }

    /// The last request's answer was read to its end.
    pub fn answered(&mut self) {
        self.busy = false;
    }

    /// Reads more into the inbox.
    pub async fn fill(&mut self) -> io::Result<()> {
        self.inbox.fill(&mut self.stream.wire()?).await
    }

    /// Writes `goodbye` and closes, unless a request is unanswered (the server would
    /// read the goodbye as part of it).
    pub async fn close_with(mut self, goodbye: &[u8]) {
        if !self.busy {
            self.stream.close_with(goodbye).await;
        }
    }
}

/// Bytes read from a connection and not yet taken by its protocol's reader.
pub struct Inbox {
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

impl Inbox {
    /// An empty inbox that reads up to `capacity` bytes at once (more when a message
    /// needs it).
    pub fn new(capacity: usize) -> Inbox {
        Inbox {
            buf: vec![0; capacity],
            start: 0,
            end: 0,
        }
    }

    /// What was read and not taken yet.
    pub fn unread(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    /// Takes the first `n` unread bytes.
    pub fn take(&mut self, n: usize) {
        self.start = (self.start + n).min(self.end);
    }

    /// Reads more from `stream`; the server closing the connection is an
    /// `UnexpectedEof` error. The inbox doubles only when what arrived fills it, never
    /// to a length a message only claims: a length the server got wrong costs a wait
    /// (ended by the call's deadline), not memory.
    pub async fn fill(&mut self, stream: &mut (impl AsyncRead + Unpin)) -> io::Result<()> {
        if self.start == self.end {
            (self.start, self.end) = (0, 0);
        } else if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            (self.start, self.end) = (0, self.end - self.start);
        }
        if self.end == self.buf.len() {
            self.buf.resize(self.buf.len() * 2, 0);
        }
        let n = stream.read(&mut self.buf[self.end..]).await?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the server closed the connection",
            ));
        }
        self.end += n;
        Ok(())
    }
}

/// A connection of hatshop's own that can tell whether it is fit for another request.
pub trait LaneConn {
    /// Whether a request of an earlier call is still unanswered (its call was
    /// cancelled), which leaves the connection unusable.
    fn busy(&self) -> bool;
}

/// A connection slot per lane, lane i taking slot i first; a slot opens its
/// connection on first use, and again after it broke or was left mid-request.
pub struct LaneSlots<C> {
    slots: Vec<Mutex<Option<C>>>,
    /// Where a caller outside a lane starts looking.
    next: AtomicUsize,
}

impl<C: LaneConn> LaneSlots<C> {
    /// `count` slots, none open yet.
    pub fn new(count: usize) -> LaneSlots<C> {
        LaneSlots {
            slots: (0..count.max(1)).map(|_| Mutex::new(None)).collect(),
            next: AtomicUsize::new(0),
        }
    }

    /// Connection slots.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// The lane's own connection if free, else any free one, else the lane's own when
    /// let go (the wait is queue time); opened with `open` if it has none, or its last
    /// request went unanswered.
    pub async fn take<F: Future<Output = Result<C, DbError>>>(
        &self,
        open: impl FnOnce() -> F,
    ) -> Result<MutexGuard<'_, Option<C>>, DbError> {
        let n = self.slots.len();
        let lane = super::lane();
        // A lane's own slot is nearly always free (another lane looks there only when
        // its own is taken): taken at once, with no clock read for a wait that did
        // not happen.
        let own = lane.and_then(|lane| self.slots[lane % n].try_lock().ok());
        let mut guard = match own {
            Some(guard) => {
                super::not_queued();
                guard
            }
            None => {
                let start = lane.unwrap_or_else(|| self.next.fetch_add(1, Ordering::Relaxed));
                super::queued(async {
                    for i in 0..n {
                        if let Ok(guard) = self.slots[(start + i) % n].try_lock() {
                            return guard;
                        }
                    }
                    self.slots[start % n].lock().await
                })
                .await
            }
        };
        if guard.as_ref().is_none_or(C::busy) {
            *guard = None;
            // Boxed: opening (a handshake, a login) is rare, and inline its future
            // would be part of every call's, which is copied whole into the heap on
            // each call (`AnyStore`).
            *guard = Some(Box::pin(open()).await?);
        }
        Ok(guard)
    }

    /// Slot `i`'s connection, once free (to be closed, or opened again).
    pub async fn slot(&self, i: usize) -> MutexGuard<'_, Option<C>> {
        self.slots[i].lock().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_inbox_keeps_what_is_not_taken_and_grows_for_a_large_message() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            let (mut socket, _) = listener.accept().await.unwrap();
            socket.write_all(b"abc").await.unwrap();
            socket.write_all(&[b'x'; 100]).await.unwrap();
        });
        let mut stream = connect("127.0.0.1", port, Duration::from_secs(5))
            .await
            .unwrap();
        let mut inbox = Inbox::new(4);
        while inbox.unread().len() < 3 {
            inbox.fill(&mut stream).await.unwrap();
        }
        assert_eq!(&inbox.unread()[..3], b"abc");
        inbox.take(3);
        while inbox.unread().len() < 100 {
            inbox.fill(&mut stream).await.unwrap();
        }
        assert_eq!(inbox.unread(), &[b'x'; 100][..]);
        inbox.take(100);
        server.await.unwrap();
        let closed = inbox.fill(&mut stream).await.unwrap_err();
        assert_eq!(closed.kind(), io::ErrorKind::UnexpectedEof);
    }

    /// Sends `request` and reads until `answer` is in the inbox, on the calling runtime.
    async fn round_trip(socket: &mut Socket, request: &[u8], answer: &[u8]) {
        socket.out.clear();
        socket.out.extend_from_slice(request);
        socket.send().await.unwrap();
        while socket.inbox.unread().len() < answer.len() {
            socket.fill().await.unwrap();
        }
        assert_eq!(socket.inbox.unread(), answer);
        socket.inbox.take(answer.len());
        socket.answered();
    }

    #[test]
    fn a_socket_moves_to_the_loop_or_runtime_using_it_even_when_its_first_has_ended() {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        // An echo server of four-byte requests, on a plain thread.
        let server = std::thread::spawn(move || {
            let (mut socket, _) = listener.accept().unwrap();
            let mut request = [0; 4];
            while socket.read_exact(&mut request).is_ok() {
                socket.write_all(&request).unwrap();
            }
        });
        let runtime = || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
        };
        let first = runtime();
        let mut socket = first.block_on(async {
            let mut socket = Socket::open("127.0.0.1", port, Duration::from_secs(5))
                .await
                .unwrap();
            round_trip(&mut socket, b"one.", b"one.").await;
            socket
        });
        drop(first);
        let second = runtime();
        second.block_on(round_trip(&mut socket, b"two.", b"two."));
        // A runtime on another thread, as a lane thread's.
        std::thread::scope(|scope| {
            scope.spawn(|| runtime().block_on(round_trip(&mut socket, b"3rd.", b"3rd.")));
        });
        // A lane thread's event loop, and back to a runtime after it.
        let (event_loop, handle) = crate::event_loop::EventLoop::new().unwrap();
        let looping = std::thread::spawn(move || event_loop.run());
        let mut socket = handle
            .spawn(async move {
                round_trip(&mut socket, b"4th.", b"4th.").await;
                socket
            })
            .blocking_recv()
            .unwrap();
        handle.release();
        looping.join().unwrap().unwrap();
        second.block_on(async {
            round_trip(&mut socket, b"5th.", b"5th.").await;
            socket.close_with(b"").await;
        });
        server.join().unwrap();
    }
}
