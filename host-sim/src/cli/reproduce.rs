//! `host-sim reproduce` (every experiment and the report of the papers' claims) and `audit`.

use std::path::PathBuf;
use std::time::Instant;

use host_sim::experiments::runner;
use host_sim::reproduce;
use host_sim::run::executor::Shard;

use crate::cli::error::{CliError, FileOp, Usage, file};
use crate::cli::run::lock_out;

/// The second pass's default budgets, in seconds of one core (`--decide-budget`): the quick
/// run's is a fifth of its own (3,002 s of jobs, measured); the full run's three core-hours,
/// beside the ≈ 8 of its first pass (measured: 28,563 s of jobs, Table 1's 10,464 of them).
const QUICK_SECOND_PASS: f64 = 600.0;
const FULL_SECOND_PASS: f64 = 10_800.0;

#[allow(clippy::too_many_arguments)]
pub(crate) fn reproduce_all(
    quick: bool,
    data: Option<PathBuf>,
    out: Option<PathBuf>,
    report_copy: Option<PathBuf>,
    threads: Option<usize>,
    shard: Option<&str>,
    merge: &[PathBuf],
    decide_budget: Option<f64>,
) -> Result<(), CliError> {
    let shard = shard.map(Shard::parse).transpose()?.unwrap_or(Shard::WHOLE);
    let budget = decide_budget.unwrap_or(if quick { QUICK_SECOND_PASS } else { FULL_SECOND_PASS });
    if !(budget.is_finite() && budget >= 0.0) {
        return Err(Usage::DecideBudget(budget).into());
    }
    let data = data.or_else(ldp_learn::env::data::default_dir);
    let out = out.unwrap_or_else(|| {
        let name = if quick { "quick" } else { "reproduce" };
        PathBuf::from("results").join(if shard.is_whole() {
            name.to_string()
        } else {
            format!("{name}-shard{}of{}", shard.index, shard.count)
        })
    });
    let _lock = lock_out(&out)?; // each experiment's run locks its own directory below it
    let start = Instant::now();
    let options = reproduce::Options { threads, shard, merge_from: merge };
    let plan = reproduce::plan(quick);
    let mut outcomes = reproduce::reproduce(&plan, data.as_deref(), &out, options);
    if !shard.is_whole() {
        say!(
            "shard {}/{} of {} runs done in {:.0} s, in {}; when every shard is done: host-sim reproduce{} --merge DIR... --out DIR",
            shard.index,
            shard.count,
            plan.len(),
            start.elapsed().as_secs_f64(),
            out.display(),
            if quick { " --quick" } else { "" }
        );
        return Ok(());
    }
    // A merge computes nothing; its directory, run again without --merge, gets the second pass.
    let second_pass = (merge.is_empty() && budget > 0.0).then_some(budget);
    let verdicts = match second_pass {
        Some(budget) => reproduce::decide(&mut outcomes, budget, data.as_deref(), &out, options).verdicts,
        None => reproduce::claims::claims(&outcomes),
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let seconds = start.elapsed().as_secs_f64();
    let timing = reproduce::report::Timing { seconds, threads, cores, second_pass };
    let write = |path: &std::path::Path, prefix: &str| {
        let text = reproduce::report::report(&outcomes, &verdicts, quick, prefix, timing);
        std::fs::write(path, text).map_err(file(FileOp::Write, path))
    };
    let report = out.join("REPORT.md");
    write(&report, "")?;
    if let Some(copy) = &report_copy {
        // The copy carries its plots: <dir>/<stem>/<run>/regret.svg beside <dir>/<stem>.md.
        let dir = copy.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
        let stem = copy
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .ok_or_else(|| Usage::ReportCopyName(copy.clone()))?;
        for o in &outcomes {
            let plot = out.join(o.planned.key).join("regret.svg");
            if plot.is_file() {
                let to = dir.join(&stem).join(o.planned.key);
                std::fs::create_dir_all(&to)
                    .and_then(|()| std::fs::copy(&plot, to.join("regret.svg")))
                    .map_err(file(FileOp::CopyTo(to.clone()), &plot))?;
            }
        }
        write(copy, &format!("{stem}/"))?;
    }
    say!("{} {:.0} s; wrote {}", reproduce::report::headline(&verdicts), timing.seconds, report.display());
    Ok(())
}

pub(crate) fn audit(
    samples: u64,
    seed: u64,
    out: Option<PathBuf>,
    qemu: Option<u64>,
) -> Result<(), CliError> {
    use host_sim::audit;
    if samples < 1000 || qemu.is_some_and(|q| q < 1000) {
        return Err(Usage::AuditSamples { samples, qemu }.into());
    }
    let dir = out.unwrap_or_else(|| PathBuf::from("results").join("audit"));
    let _lock = lock_out(&dir)?;
    let alpha = 1e-6;
    eprintln!("auditing with {samples} draws per neighbour, Clopper-Pearson at alpha = {alpha} ...");
    let mut verdicts = audit::audit_all(&audit::cases(), samples, alpha, seed);
    if let Some(qemu_samples) = qemu {
        let elf = host_sim::experiments::runner::default_firmware_elf();
        if !elf.is_file() {
            return Err(runner::ConfigError::NoFirmware(elf).into());
        }
        eprintln!("auditing the firmware under QEMU with {qemu_samples} draws per neighbour ...");
        verdicts.extend(audit::audit_all(&audit::firmware_cases(&elf), qemu_samples, alpha, seed));
    }
    print!("{}", audit::table(&verdicts));
    let path = dir.join("audit.json");
    let record = serde_json::json!({
        "samples_per_neighbour": samples,
        "qemu_samples_per_neighbour": qemu,
        "alpha": alpha,
        "seed": seed,
        "verdicts": verdicts,
    });
    let json = serde_json::to_string_pretty(&record)?;
    std::fs::write(&path, json).map_err(file(FileOp::Write, &path))?;
    say!("wrote {}", path.display());
    let names = |contrary: fn(&audit::Verdict) -> bool| -> Vec<String> {
        verdicts.iter().filter(|v| contrary(v)).map(|v| v.name.clone()).collect()
    };
    // A device that failed during its audit fails it, a broken fixture's included.
    let failed = names(|v| (v.ours && !v.passed) || v.failed());
    let missed = names(|v| !v.ours && v.passed);
    if failed.is_empty() && missed.is_empty() {
        Ok(())
    } else {
        Err(Usage::AuditContrary { failed, missed, samples }.into())
    }
}
