//! `host-sim`: the learner's command line. With no arguments it runs the default experiment,
//! Zhou & Tan Fig. 2(a) (LDP, ε = 1, synthetic Matérn, 10 trials, T = 1000).

/// Prints a line on stdout. A closed stdout (`host-sim ... | head`) is no reason to die: the
/// run goes on and writes its files (`println!` would panic).
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

use std::process::ExitCode;

use clap::Parser;
use host_sim::privatise::{PrivatiseConfig, privatise};
use host_sim::run::plot::{PlotOptions, replot_to};

mod cli;
use cli::args::{Cli, Command, FleetCommand, RunArgs, modern_flags};
use cli::devices::{fleet_bench, fleet_bridge, fleet_devices, live};
use cli::error::{CliError, Usage};
use cli::privatise::privatise_file;
use cli::reproduce::{audit, reproduce_all};
use cli::run::{list, lock_out, merge, run};

fn main() -> ExitCode {
    let cli = Cli::parse_from(modern_flags(std::env::args_os()));
    let result = match cli.command {
        None => run(RunArgs { experiment: Some("fig2a".into()), ..RunArgs::default() }, &[]),
        Some(Command::List) => {
            list();
            Ok(())
        }
        Some(Command::Run(args)) => run(*args, &[]),
        Some(Command::Merge { dirs, out, data }) => merge(dirs, out, data),
        Some(Command::Plot { dir, log_log, out, title }) => lock_out(&dir)
            .and_then(|_lock| {
                replot_to(&dir, &PlotOptions { log_log }, out.as_deref(), title.as_deref())
                    .map_err(CliError::from)
            })
            .map(|files| {
                let names: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
                say!("wrote {}", names.join(", "));
            }),
        Some(Command::Reproduce { quick, data, out, report_copy, threads, shard, merge, decide_budget }) => {
            reproduce_all(quick, data, out, report_copy, threads, shard.as_deref(), &merge, decide_budget)
        }
        Some(Command::Audit { samples, seed, out, qemu, qemu_samples }) => {
            audit(samples, seed, out, qemu.then_some(qemu_samples))
        }
        Some(Command::Fleet { command: FleetCommand::Devices(args) }) => fleet_devices(*args),
        Some(Command::Fleet { command: FleetCommand::Bridge(args) }) => fleet_bridge(*args),
        Some(Command::Fleet { command: FleetCommand::Bench(args) }) => fleet_bench(*args),
        Some(Command::Live(args)) => live(*args),
        Some(Command::Privatise {
            eps,
            reports,
            b,
            r,
            seed,
            input: None,
            columns: None,
            out: None,
            keep_label: false,
        }) => {
            let (b, r, seed) = (b.unwrap_or(1.0), r.unwrap_or(1.0), seed.unwrap_or(0));
            privatise(PrivatiseConfig { epsilon: eps, reports, b, r, seed })
                .map(|s| print!("{s}"))
                .map_err(CliError::from)
        }
        Some(Command::Privatise { input: None, .. }) => Err(Usage::PrivatiseWithoutInput.into()),
        Some(Command::Privatise { seed: Some(_), input: Some(_), .. }) => Err(Usage::PrivatiseSeeded.into()),
        Some(Command::Privatise { eps, b, r, input: Some(input), columns, out, keep_label, .. }) => {
            privatise_file(&input, columns, out, eps, b, r, keep_label)
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
