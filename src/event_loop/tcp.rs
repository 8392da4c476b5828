//! A TCP connection watched by the event loop of the thread that adopted it: reads and
//! writes are tried at once, and a task waits on the loop only when the kernel says
//! the socket would block.

use std::io::{self, Read, Write};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use mio::{Interest, Token};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::{Shared, Waiters, current, locked};

/// A non-blocking TCP connection registered with one event loop.
pub struct LoopTcp {
    /// `None` only once handed back by [`LoopTcp::into_std`].
    stream: Option<mio::net::TcpStream>,
    token: usize,
    home: Arc<Shared>,
}

/// Which of a socket's waiters a task becomes.
#[derive(Clone, Copy)]
enum Direction {
    Read,
    Write,
}

impl LoopTcp {
    /// `stream` (non-blocking), watched from now on by the event loop of this thread;
    /// an error off a loop's thread.
    pub fn adopt(stream: std::net::TcpStream) -> io::Result<LoopTcp> {
        let home = current().ok_or_else(|| {
            io::Error::other("a socket can join an event loop only on the loop's own thread")
        })?;
        let token = locked(&home.sockets).insert(Waiters::default());
        let mut stream = mio::net::TcpStream::from_std(stream);
        let interest = Interest::READABLE | Interest::WRITABLE;
        if let Err(e) = home.registry.register(&mut stream, Token(token), interest) {
            locked(&home.sockets).remove(token);
            return Err(e);
        }
        Ok(LoopTcp {
            stream: Some(stream),
            token,
            home,
        })
    }

    /// The connection, no longer watched by its loop (still non-blocking).
    pub fn into_std(mut self) -> io::Result<std::net::TcpStream> {
        let stream = self.leave().ok_or(io::ErrorKind::NotConnected)?;
        Ok(stream.into())
    }

    /// Takes the stream out of its loop's sight.
    fn leave(&mut self) -> Option<mio::net::TcpStream> {
        let mut stream = self.stream.take()?;
        let _ = self.home.registry.deregister(&mut stream);
        locked(&self.home.sockets).try_remove(self.token);
        Some(stream)
    }

    /// Runs `io` on the stream; when it would block, the task waits for the loop to
    /// say the socket is ready in `direction`.
    fn attempt<T>(
        &mut self,
        cx: &Context<'_>,
        direction: Direction,
        mut io: impl FnMut(&mut mio::net::TcpStream) -> io::Result<T>,
    ) -> Poll<io::Result<T>> {
        let Some(stream) = self.stream.as_mut() else {
            return Poll::Ready(Err(io::ErrorKind::NotConnected.into()));
        };
        loop {
            match io(stream) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    // Same thread as the loop: its next look at the kernel, after
                    // this, reports the socket's next change (edge-triggered).
                    self.wait(cx.waker(), direction);
                    return Poll::Pending;
                }
                done => return Poll::Ready(done),
            }
        }
    }

    fn wait(&self, waker: &Waker, direction: Direction) {
        let mut sockets = locked(&self.home.sockets);
        let Some(waiters) = sockets.get_mut(self.token) else {
            return;
        };
        let slot = match direction {
            Direction::Read => &mut waiters.reader,
            Direction::Write => &mut waiters.writer,
        };
        match slot {
            Some(waiting) if waiting.will_wake(waker) => {}
            _ => *slot = Some(waker.clone()),
        }
    }
}

impl Drop for LoopTcp {
    fn drop(&mut self) {
        self.leave();
    }
}

impl AsyncRead for LoopTcp {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let read = this.attempt(cx, Direction::Read, |stream| {
            stream.read(buf.initialize_unfilled())
        });
        read.map_ok(|n| buf.advance(n))
    }
}

impl AsyncWrite for LoopTcp {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.get_mut()
            .attempt(cx, Direction::Write, |stream| stream.write(bytes))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let shut = match self.get_mut().stream.as_ref() {
            Some(stream) => stream.shutdown(std::net::Shutdown::Write),
            None => Ok(()),
        };
        Poll::Ready(shut)
    }
}
