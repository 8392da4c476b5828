//! A thread's own event loop, for lanes over hatshop's own wires: the tasks given to it,
//! polled on its thread, and the sockets they wait on, watched by one epoll of its own
//! (mio). It stands where a single-threaded async runtime stood, with less between a
//! server's answer and the lane waiting for it: no scheduler budget, timer wheel or
//! driver layers. Timers and the rest of tokio still work on the thread (it enters the
//! main runtime), driven by the main runtime.

mod tcp;

pub use tcp::LoopTcp;

use std::cell::RefCell;
use std::future::Future;
use std::io;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Wake, Waker};

use mio::{Events, Registry, Token};
use slab::Slab;
use tokio::sync::oneshot;

/// The token of the loop's own waker, which another thread uses to say a task of the
/// loop is ready (or the loop is released).
const WAKE: Token = Token(usize::MAX);
/// Readiness events taken from the kernel at once.
const EVENTS: usize = 256;

thread_local! {
    /// The loop running on this thread, if any.
    static CURRENT: RefCell<Option<Arc<Shared>>> = const { RefCell::new(None) };
}

/// The id of the loop running on this thread (none off a loop's thread).
pub fn here() -> Option<usize> {
    CURRENT.with(|current| current.borrow().as_ref().map(|shared| shared.id))
}

fn current() -> Option<Arc<Shared>> {
    CURRENT.with(|current| current.borrow().clone())
}

/// What a loop shares with the tasks, sockets and handles that belong to it.
struct Shared {
    id: usize,
    /// Tasks woken and not yet polled.
    ready: Mutex<Vec<Arc<Task>>>,
    /// Every task given to the loop, so that those unfinished at its end are dropped;
    /// `None` once it ended, when a task given to it is dropped at once.
    tasks: Mutex<Option<Vec<Arc<Task>>>>,
    /// The loop waits in the kernel: a task woken from another thread must wake it.
    sleeping: AtomicBool,
    released: AtomicBool,
    waker: mio::Waker,
    /// Where sockets register (a handle of its own on the loop's epoll, which stays
    /// open while a socket holds it, even past the loop's end).
    registry: Registry,
    /// The tasks each socket's reader and writer wait on, by the socket's token.
    sockets: Mutex<Slab<Waiters>>,
}

/// The wakers of the tasks waiting for a socket to be readable and writable.
#[derive(Default)]
struct Waiters {
    reader: Option<Waker>,
    writer: Option<Waker>,
}

/// A mutex's guard, whatever a panic elsewhere left: what these guard stays whole.
fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

type BoxedTask = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A future given to a loop, and whether it is in the loop's ready list.
struct Task {
    future: Mutex<Option<BoxedTask>>,
    queued: AtomicBool,
    home: Arc<Shared>,
}

impl Task {
    /// Polls the future once; it is dropped when it ends or panics (its handle then
    /// hears nothing, as from a task that failed).
    fn poll(self: &Arc<Self>) {
        // A wake from here on lists the task again.
        self.queued.store(false, Ordering::Release);
        let waker = Waker::from(self.clone());
        let mut cx = Context::from_waker(&waker);
        let mut slot = locked(&self.future);
        let Some(future) = slot.as_mut() else {
            return;
        };
        let pending = matches!(
            catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(&mut cx))),
            Ok(Poll::Pending)
        );
        if !pending {
            *slot = None;
        }
    }
}

impl Wake for Task {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // A loop that ended polls nothing: the task is not kept for it.
        if self.home.released.load(Ordering::Acquire) || self.queued.swap(true, Ordering::AcqRel) {
            return;
        }
        locked(&self.home.ready).push(self.clone());
        // The loop sets `sleeping` before it looks at the ready list one last time, so
        // either it sees this task there or this sees it sleeping.
        if self.home.sleeping.swap(false, Ordering::SeqCst) {
            let _ = self.home.waker.wake();
        }
    }
}

/// An event loop, to be run on the thread that owns it.
pub struct EventLoop {
    poll: mio::Poll,
    shared: Arc<Shared>,
}

/// Gives tasks to a loop from any thread, and ends it.
pub struct LoopHandle(Arc<Shared>);

impl EventLoop {
    /// A loop and its handle; nothing runs until [`EventLoop::run`].
    pub fn new() -> io::Result<(EventLoop, LoopHandle)> {
        static NEXT_ID: AtomicUsize = AtomicUsize::new(1);
        let poll = mio::Poll::new()?;
        let shared = Arc::new(Shared {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            ready: Mutex::new(Vec::new()),
            tasks: Mutex::new(Some(Vec::new())),
            sleeping: AtomicBool::new(false),
            released: AtomicBool::new(false),
            waker: mio::Waker::new(poll.registry(), WAKE)?,
            registry: poll.registry().try_clone()?,
            sockets: Mutex::new(Slab::new()),
        });
        let handle = LoopHandle(shared.clone());
        Ok((EventLoop { poll, shared }, handle))
    }

    /// Polls the tasks woken and waits for sockets to be ready, until released; tasks
    /// still running then are dropped.
    pub fn run(mut self) -> io::Result<()> {
        CURRENT.with(|current| *current.borrow_mut() = Some(self.shared.clone()));
        let ran = self.turn_until_released();
        CURRENT.with(|current| *current.borrow_mut() = None);
        let unfinished = locked(&self.shared.tasks).take().unwrap_or_default();
        for task in unfinished {
            // Out of the slot before it is dropped: dropping may wake tasks of this loop.
            let future = locked(&task.future).take();
            drop(future);
        }
        locked(&self.shared.ready).clear();
        ran
    }

    fn turn_until_released(&mut self) -> io::Result<()> {
        let shared = self.shared.clone();
        let mut events = Events::with_capacity(EVENTS);
        let mut batch = Vec::new();
        while !shared.released.load(Ordering::Acquire) {
            std::mem::swap(&mut batch, &mut *locked(&shared.ready));
            for task in batch.drain(..) {
                task.poll();
            }
            // With tasks ready again, only look at the kernel; else sleep there.
            let timeout = if locked(&shared.ready).is_empty() {
                shared.sleeping.store(true, Ordering::SeqCst);
                let idle =
                    locked(&shared.ready).is_empty() && !shared.released.load(Ordering::SeqCst);
                if idle {
                    None
                } else {
                    Some(std::time::Duration::ZERO)
                }
            } else {
                Some(std::time::Duration::ZERO)
            };
            let polled = self.poll.poll(&mut events, timeout);
            shared.sleeping.store(false, Ordering::SeqCst);
            match polled {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            for event in &events {
                if event.token() != WAKE {
                    shared.socket_ready(event);
                }
            }
        }
        Ok(())
    }
}

impl Shared {
    /// Wakes the tasks waiting for what `event` says a socket can do now.
    fn socket_ready(&self, event: &mio::event::Event) {
        let (reader, writer) = {
            let mut sockets = locked(&self.sockets);
            let Some(waiters) = sockets.get_mut(event.token().0) else {
                return;
            };
            let failed = event.is_error();
            let reader = (event.is_readable() || event.is_read_closed() || failed)
                .then(|| waiters.reader.take())
                .flatten();
            let writer = (event.is_writable() || event.is_write_closed() || failed)
                .then(|| waiters.writer.take())
                .flatten();
            (reader, writer)
        };
        if let Some(reader) = reader {
            reader.wake();
        }
        if let Some(writer) = writer {
            writer.wake();
        }
    }
}

impl LoopHandle {
    /// Runs `future` on the loop; its output comes back through the receiver, which
    /// hears nothing if the task panicked or the loop ended first.
    pub fn spawn<F>(&self, future: F) -> oneshot::Receiver<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let (output, receiver) = oneshot::channel();
        let task = Arc::new(Task {
            future: Mutex::new(Some(Box::pin(async move {
                let _ = output.send(future.await);
            }))),
            queued: AtomicBool::new(false),
            home: self.0.clone(),
        });
        match locked(&self.0.tasks).as_mut() {
            Some(tasks) => tasks.push(task.clone()),
            // The loop ended: the task is dropped unpolled, and the receiver hears so.
            None => return receiver,
        }
        task.wake_by_ref();
        receiver
    }

    /// Ends the loop at its next turn.
    pub fn release(&self) {
        self.0.released.store(true, Ordering::SeqCst);
        let _ = self.0.waker.wake();
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::time::Duration;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    /// A loop on a thread of its own, and that thread.
    fn start() -> (LoopHandle, std::thread::JoinHandle<io::Result<()>>) {
        let (event_loop, handle) = EventLoop::new().unwrap();
        (handle, std::thread::spawn(move || event_loop.run()))
    }

    #[test]
    fn a_task_waits_for_its_socket_and_a_wake_from_another_thread() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let (handle, thread) = start();
        let (go, went) = oneshot::channel::<u8>();
        let answer = handle.spawn(async move {
            let std = std::net::TcpStream::connect(address).unwrap();
            std.set_nonblocking(true).unwrap();
            let mut tcp = LoopTcp::adopt(std).unwrap();
            // Woken by a send from the test's thread while the loop sleeps.
            let byte = went.await.unwrap();
            tcp.write_all(&[byte]).await.unwrap();
            let mut echo = [0; 2];
            // The server answers later: the task waits on the loop for it.
            tcp.read_exact(&mut echo).await.unwrap();
            echo
        });
        let (mut server, _) = listener.accept().unwrap();
        std::thread::sleep(Duration::from_millis(20));
        go.send(7).unwrap();
        let mut request = [0; 1];
        server.read_exact(&mut request).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        server.write_all(&[request[0], request[0] + 1]).unwrap();
        assert_eq!(answer.blocking_recv().unwrap(), [7, 8]);
        handle.release();
        thread.join().unwrap().unwrap();
    }

    #[test]
    fn answers_in_pieces_and_the_end_are_each_heard() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let (handle, thread) = start();
        let rounds = 2_000u32;
        let answers = handle.spawn(async move {
            let std = std::net::TcpStream::connect(address).unwrap();
            std.set_nonblocking(true).unwrap();
            let mut tcp = LoopTcp::adopt(std).unwrap();
            let mut heard = Vec::new();
            for round in 0..rounds {
                tcp.write_all(&round.to_le_bytes()).await.unwrap();
                // Room for more than the answer: reads come back short.
                let mut answer = [0; 64];
                let mut got = 0;
                while got < 4 {
                    got += tcp.read(&mut answer[got..]).await.unwrap();
                }
                heard.push(u32::from_le_bytes(answer[..4].try_into().unwrap()));
            }
            // The end, once the server closes, reads as 0 bytes and stays so.
            assert_eq!(tcp.read(&mut [0; 8]).await.unwrap(), 0);
            assert_eq!(tcp.read(&mut [0; 8]).await.unwrap(), 0);
            heard
        });
        let (mut server, _) = listener.accept().unwrap();
        for round in 0..rounds {
            let mut request = [0; 4];
            server.read_exact(&mut request).unwrap();
            let answer = u32::from_le_bytes(request) + 1;
            // Half the answers come in two pieces, the second after the client may
            // have read the first and found no more.
            if round % 2 == 0 {
                server.write_all(&answer.to_le_bytes()).unwrap();
            } else {
                server.write_all(&answer.to_le_bytes()[..1]).unwrap();
                std::thread::sleep(Duration::from_micros(200));
                server.write_all(&answer.to_le_bytes()[1..]).unwrap();
            }
        }
        drop(server);
        let heard = answers.blocking_recv().unwrap();
        assert_eq!(heard, (1..=rounds).collect::<Vec<_>>());
        handle.release();
        thread.join().unwrap().unwrap();
    }

    #[test]
    fn a_panicking_task_ends_alone_and_release_drops_the_unfinished() {
        let (handle, thread) = start();
        let panicked = handle.spawn(async { panic!("on purpose") });
        assert!(panicked.blocking_recv().is_err());
        assert_eq!(handle.spawn(async { 5 }).blocking_recv().unwrap(), 5);

        // A task that never ends is dropped at release, and the thread ends.
        let (dropped, heard) = oneshot::channel::<()>();
        let forever = handle.spawn(async move {
            let _dropped_with_the_task = dropped;
            std::future::pending::<()>().await
        });
        handle.release();
        thread.join().unwrap().unwrap();
        assert!(heard.blocking_recv().is_err());
        assert!(forever.blocking_recv().is_err());
        // A task given to a loop that ended is dropped, not left waiting.
        assert!(handle.spawn(async { 6 }).blocking_recv().is_err());
    }

    #[test]
    fn a_socket_joins_a_loop_only_on_its_thread() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let std = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let refused = LoopTcp::adopt(std).err().unwrap();
        assert!(
            refused.to_string().contains("loop's own thread"),
            "{refused}"
        );
    }
}
