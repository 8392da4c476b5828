//! One file per subcommand: each is a thin caller of the layers below for its job, and
//! none calls another (a run's life, which several share, is `lifecycle`'s).

pub mod compare;
pub mod export;
pub mod generate;
pub mod load;
pub mod merge;
pub mod prepare;
pub mod recover;
pub mod repeat;
pub mod run;
pub mod server;
pub mod shell_and_man;
pub mod show;
pub mod study;
pub mod sweep;
pub mod verify;
pub mod workloads;
