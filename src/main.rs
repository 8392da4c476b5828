//! The binary: parse the command line, build the runtime, run, report one error line.

use std::process::ExitCode;

use clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand;

fn main() -> ExitCode {
    if let Err(e) = hatshop::interrupt::install() {
        eprintln!("error: cannot listen for Ctrl-C: {e}");
        return ExitCode::FAILURE;
    }
    hatshop::db::declare_secret_user_info();
    let args = match hatshop::cli::config_file::with_file_settings(std::env::args_os().collect()) {
        Ok(args) => args,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let cli = match hatshop::cli::Cli::from_command_line(args) {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() && e.kind() != DisplayHelpOnMissingArgumentOrSubcommand => {
            eprintln!(
                "{}",
                hatshop::cli::usage_error_line(&e.render().to_string())
            );
            return ExitCode::from(2);
        }
        // --help, --version, or a bare `hatshop server`: clap's own text.
        Err(e) => e.exit(),
    };
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    // The name run.json's CPU split knows the lanes' threads by.
    builder.thread_name(hatshop::client_cost::RUNTIME_THREADS);
    if let Some(threads) = hatshop::client_threads(&cli) {
        builder.worker_threads(threads);
    }
    let runtime = match builder.enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let code = match runtime.block_on(hatshop::run(cli)) {
        Ok(code) => code,
        Err(e) if e.downcast_ref::<hatshop::cli::UsageError>().is_some() => {
            hatshop::console::err(&format!("error: {}\n", hatshop::one_line(&e)));
            ExitCode::from(2)
        }
        Err(e) => {
            hatshop::console::err(&format!("error: {}\n", hatshop::one_line(&e)));
            ExitCode::FAILURE
        }
    };
    // Background tasks (a connection waiting on a silent server) must not hold the exit.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    // What was printed was not all written (a full disk under `> file`): not a success.
    if let Some(why) = hatshop::console::stdout_failure() {
        hatshop::console::err(&format!("error: cannot write standard output: {why}\n"));
        return ExitCode::FAILURE;
    }
    code
}
