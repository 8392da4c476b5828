//! The binary: parse the command line, build the runtime, run, report one error line.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // Like other Unix tools, end quietly when the reader of our output goes away
    // (`hatshop compare … | head`), instead of failing on every later print.
    // SAFETY: called before any thread starts; SIG_DFL is always a valid handler.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = hatshop::cli::Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(hatshop::run(cli)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
