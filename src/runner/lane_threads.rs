//! Threads of their own for the lanes, each with a single-threaded runtime (a store's
//! `lane_threads`, or `--lane-threads`). A lane there waits for its server on its own
//! thread's event loop: the answer wakes that thread, which runs the lane at once,
//! where on the shared runtime the worker that polls the event loop may wake another
//! to run it. With 2 to 4 lanes on 2 cores, lanes on the shared runtime did a half to
//! two thirds of the point selects and reads per second on MariaDB and PostgreSQL
//! (bench/NOTES.md).

use std::future::Future;
use std::io;
use std::thread::JoinHandle;

use tokio::runtime::{Builder, Handle};
use tokio::sync::oneshot;

/// The lane threads of one run; their runtimes end when it is dropped, once their
/// lanes have ended.
pub struct LaneThreads {
    runtimes: Vec<Handle>,
    /// Each thread runs until it hears from here (or its sender is dropped).
    release: Vec<oneshot::Sender<()>>,
    threads: Vec<JoinHandle<()>>,
}

impl LaneThreads {
    /// Starts `count` threads (at least one), each running a runtime of its own.
    pub fn start(count: usize) -> io::Result<LaneThreads> {
        let mut threads = LaneThreads {
            runtimes: Vec::with_capacity(count),
            release: Vec::with_capacity(count),
            threads: Vec::with_capacity(count),
        };
        for index in 0..count.max(1) {
            let runtime = Builder::new_current_thread().enable_all().build()?;
            let (release, released) = oneshot::channel::<()>();
            threads.runtimes.push(runtime.handle().clone());
            threads.release.push(release);
            threads.threads.push(
                std::thread::Builder::new()
                    .name(format!("lanes-{index}"))
                    .spawn(move || {
                        // Its tasks run while the thread waits here; those still
                        // running when it is released are dropped with the runtime.
                        let _ = runtime.block_on(released);
                        crate::client_cost::thread_ends();
                    })?,
            );
        }
        Ok(threads)
    }

    /// Threads running.
    pub fn count(&self) -> usize {
        self.runtimes.len()
    }

    /// Runs lane `lane`'s task on its thread.
    pub fn spawn<F>(&self, lane: usize, task: F) -> tokio::task::JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.runtimes[lane % self.runtimes.len()].spawn(task)
    }
}

impl Drop for LaneThreads {
    fn drop(&mut self) {
        for release in self.release.drain(..) {
            let _ = release.send(());
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
    fn each_lane_runs_on_its_threads_runtime_and_the_threads_end_when_dropped() {
        let threads = LaneThreads::start(2).unwrap();
        let main = Builder::new_current_thread().enable_all().build().unwrap();
        let names: Vec<String> = main.block_on(async {
            let mut names = Vec::new();
            for lane in 0..4 {
                let task = threads.spawn(lane, async {
                    tokio::time::sleep(std::time::Duration::from_millis(1)).await;
                    std::thread::current().name().unwrap().to_string()
                });
                names.push(task.await.unwrap());
            }
            names
        });
        assert_eq!(names, ["lanes-0", "lanes-1", "lanes-0", "lanes-1"]);
        drop(threads);
    }
}
