//! Threads of their own for the lanes, each running an event loop of its own
//! (`event_loop`), for a store's `lane_threads` or `--lane-threads`. A lane there waits
//! for its server on its own thread's loop: the answer wakes that thread, which runs
//! the lane at once, where on the shared runtime the worker that polls the kernel may
//! wake another to run it. With 2 to 4 lanes on 2 cores, lanes on the shared runtime
//! did a half to two thirds of the point selects and reads per second on MariaDB and
//! PostgreSQL (bench/NOTES.md). The loop's threads enter the runtime that starts them,
//! so a lane's timers and anything else of tokio's work there, driven by that runtime.

use std::future::Future;
use std::io;
use std::thread::JoinHandle;

use tokio::runtime::Handle;
use tokio::sync::oneshot;

use crate::event_loop::{EventLoop, LoopHandle};

/// The lane threads of one run; their loops end when it is dropped, and lanes still
/// running then are dropped with them.
pub struct LaneThreads {
    loops: Vec<LoopHandle>,
    threads: Vec<JoinHandle<()>>,
}

impl LaneThreads {
    /// Starts `count` threads (at least one), each running a loop of its own, in the
    /// calling runtime's context if there is one.
    pub fn start(count: usize) -> io::Result<LaneThreads> {
        let runtime = Handle::try_current().ok();
        let mut threads = LaneThreads {
            loops: Vec::with_capacity(count),
            threads: Vec::with_capacity(count),
        };
        for index in 0..count.max(1) {
            let (event_loop, handle) = EventLoop::new()?;
            let runtime = runtime.clone();
            threads.loops.push(handle);
            threads.threads.push(
                std::thread::Builder::new()
                    .name(format!("lanes-{index}"))
                    .spawn(move || {
                        let _entered = runtime.as_ref().map(Handle::enter);
                        if let Err(e) = event_loop.run() {
                            crate::console::err(&format!(
                                "a lane thread's event loop failed: {e}\n"
                            ));
                        }
                        crate::client_cost::thread_ends();
                    })?,
            );
        }
        Ok(threads)
    }

    /// Threads running.
    pub fn count(&self) -> usize {
        self.loops.len()
    }

    /// Runs lane `lane`'s task on its thread; the receiver hears its output, or
    /// nothing if it panicked.
    pub fn spawn<F>(&self, lane: usize, task: F) -> oneshot::Receiver<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.loops[lane % self.loops.len()].spawn(task)
    }
}

impl Drop for LaneThreads {
    fn drop(&mut self) {
        for handle in &self.loops {
            handle.release();
        }
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_lane_runs_on_its_threads_loop_and_the_threads_end_when_dropped() {
        let main = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let names: Vec<String> = main.block_on(async {
            let threads = LaneThreads::start(2).unwrap();
            let mut names = Vec::new();
            for lane in 0..4 {
                // A timer of the runtime that started the threads wakes the lane.
                let task = threads.spawn(lane, async {
                    tokio::time::sleep(std::time::Duration::from_millis(1)).await;
                    std::thread::current().name().unwrap().to_string()
                });
                names.push(task.await.unwrap());
            }
            names
        });
        assert_eq!(names, ["lanes-0", "lanes-1", "lanes-0", "lanes-1"]);
    }
}
