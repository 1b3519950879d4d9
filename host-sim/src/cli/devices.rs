//! The commands with devices: `host-sim live` (a learner against the user's own device) and
//! `fleet devices`, `fleet bridge` and `fleet bench`.

use std::path::Path;

use host_sim::experiments::runner;
use ldp_learn::env::custom::KernelChoice;

use crate::cli::args::{BenchArgs, BridgeArgs, DevicesArgs, LiveArgs, constants_of};
use crate::cli::error::{CliError, FileOp, Sign, Usage, file};
use crate::cli::run::check;

/// `host-sim live`: the learner against the user's device, until the horizon or the device's
/// budget; prints the most played action and writes live.csv, live.json and actions.csv.
pub(crate) fn live(args: LiveArgs) -> Result<(), CliError> {
    use host_sim::live::{self, Actions, LiveSpec};
    use ldp_link::connect::keyed_client;
    use ldp_link::transport::{QemuDevice, SerialLink, TcpLink};

    let epsilon = ldp_core::Epsilon::new(args.eps).map_err(|_| Usage::NotAnEpsilon(args.eps.to_string()))?;
    let learners = ldp_learn::optimizer::learners();
    let learner = learners
        .iter()
        .find(|a| host_sim::run::executor::names_learner(&args.learner, a.label(true)))
        .copied()
        .ok_or_else(|| Usage::UnknownLearner {
            name: args.learner.clone(),
            valid: learners.iter().map(|a| a.label(true)).collect(),
        })?;
    let actions = match (&args.coords, args.actions) {
        (Some(path), _) => Actions::file(path.clone())?,
        // clap requires one of the two.
        (None, count) => Actions::Grid { count: count.unwrap_or(0) },
    };
    check("--lengthscale", args.lengthscale, Sign::Positive)?;
    let lengthscale = match (&actions, args.lengthscale) {
        (Actions::Grid { .. }, None) => Some(ldp_learn::env::sensor::SENSOR_PRIOR_LENGTHSCALE),
        (_, l) => l,
    };
    check("--beta-scale", Some(args.beta_scale), Sign::NonNegative)?;
    let spec = LiveSpec {
        learner,
        actions,
        kernel: KernelChoice { name: args.kernel, lengthscale },
        epsilon,
        horizon: args.horizon,
        seed: args.seed,
        constants: constants_of(args.constants),
        beta_scale: args.beta_scale,
    };
    let quiet = args.quiet;
    let every = (args.horizon / 20).max(1);
    let progress = |r: &live::Round, horizon: usize| {
        if !quiet && (r.round.is_multiple_of(every) || r.round == horizon) {
            eprintln!(
                "round {}/{horizon}: action {}, released {:.4}, budget left {}",
                r.round, r.action, r.release, r.budget_remaining
            );
        }
    };
    let device = runner::DeviceKind::parse(&args.device)?;
    let session = ldp_link::fleet::session_start().map_err(CliError::System)?;
    let outcome = match device {
        runner::DeviceKind::Serial { path } => {
            let auth = runner::single_device_auth()?;
            let link =
                SerialLink::open(&path).map_err(|source| CliError::Connect { target: path, source })?;
            let key_file = runner::keys_origin(auth.device_id);
            let mut client = keyed_client(link, auth, key_file.as_deref()).starting_after(session);
            live::run(&mut client, &spec, &args.out, progress)
        }
        runner::DeviceKind::Tcp { addr } => {
            let auth = runner::single_device_auth()?;
            let link = TcpLink::connect(&addr, std::time::Duration::from_secs(5))
                .map_err(|source| CliError::Connect { target: addr, source })?;
            let key_file = runner::keys_origin(auth.device_id);
            let mut client = keyed_client(link, auth, key_file.as_deref()).starting_after(session);
            live::run(&mut client, &spec, &args.out, progress)
        }
        runner::DeviceKind::Qemu { elf } => {
            // The board of `--out`: made for a new run only, and never again once lost.
            let dir = args.out.join("device");
            let recorded = args.out.join(live::LIVE_JSON).exists();
            let _lock = claim_board(&dir, &elf, !recorded, |why| match why {
                ldp_link::fleet::NotProvisionable::NotAsked => Usage::LiveBoardGone { out: args.out.clone() },
                why => Usage::Provision { dir: dir.clone(), why },
            })?;
            let mut qemu = QemuDevice::start(&elf, &dir).map_err(CliError::System)?;
            let link = qemu.connect().map_err(CliError::System)?;
            let auth = qemu.auth().map_err(CliError::System)?;
            let key_file = dir.join(ldp_link::keys::BOARD_KEY_FILE);
            let mut client = keyed_client(link, auth, Some(&key_file)).starting_after(session);
            live::run(&mut client, &spec, &args.out, progress)
        }
        _ => return Err(Usage::LiveDevice.into()),
    }?;
    if outcome.budget_exhausted {
        say!(
            "the device's budget is exhausted after round {}: nothing more can be learned from it",
            outcome.rounds.len()
        );
    }
    say!("{}", outcome.summary());
    if let Some((action, n)) = live::most_played(&outcome.rounds) {
        say!("most played: action {action} ({n} of {} rounds)", outcome.rounds.len());
    }
    say!("wrote {}", outcome.files.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "));
    Ok(())
}

/// `fleet devices`: a device's lifetime budget without --user-budget, in reports at the
/// per-report ε (several reservation chunks of 16, so a restart does not end a device).
pub(crate) const DEFAULT_USER_BUDGET_REPORTS: f64 = 100.0;

/// `host-sim fleet devices`: boots the devices, serves them until stdin closes or --seconds
/// pass, prints one line per device at the start and a summary at the end.
pub(crate) fn fleet_devices(args: DevicesArgs) -> Result<(), CliError> {
    use host_sim::experiments::experiment_env;
    use ldp_link::mqtt::{BrokerUrl, Devices, DevicesSpec, Seeds};

    let broker = BrokerUrl::parse(&args.broker)?;
    if args.count == 0 {
        return Err(Usage::NoDevices.into());
    }
    let data = args.data.or_else(ldp_learn::env::data::default_dir);
    let (env, experiment_eps) = experiment_env(&args.experiment, args.seed, args.trial, data.as_deref())?;
    let epsilon = match args.eps {
        Some(e) => ldp_core::Epsilon::new(e).map_err(|_| Usage::NotAnEpsilon(e.to_string()))?,
        None => experiment_eps,
    };
    let user_budget = args.user_budget.unwrap_or(DEFAULT_USER_BUDGET_REPORTS * epsilon.get());
    let mut spec = DevicesSpec::new(broker.clone(), &args.dir, args.count, env, epsilon, user_budget);
    spec.first_id = args.first_id;
    spec.provision = args.provision;
    if args.simulation {
        let trial_seed = host_sim::run::settings::derive_seed(args.seed, args.trial, 0);
        spec.seeds = Seeds::Simulated { trial_seed };
    }
    let devices = Devices::open(&spec)?;
    for d in devices.status() {
        say!(
            "device {}: boot {}, budget left {} (eps {epsilon} per report), state {}",
            d.id,
            d.boot,
            d.budget_remaining,
            d.state_file.display()
        );
    }
    let keys = if args.simulation { "simulated keys from the seed (no privacy)" } else { "keys from the OS" };
    match args.seconds {
        Some(s) => say!("serving {} devices on {broker} with {keys} for {s} s", args.count),
        None => {
            say!("serving {} devices on {broker} with {keys} until stdin closes (Ctrl-D)", args.count)
        }
    }
    let stop = stop_flag(args.seconds);
    let stats = devices.serve(&stop)?;
    say!(
        "stopped: {} replies ({} late), {} connection(s), {} publishes dropped",
        stats.replies,
        stats.late_replies,
        stats.connections,
        stats.dropped_publishes
    );
    for d in &stats.devices {
        say!("device {}: budget left {}", d.id, d.budget_remaining);
    }
    Ok(())
}

/// A flag set after `seconds`, or when stdin closes.
pub(crate) fn stop_flag(seconds: Option<u64>) -> std::sync::Arc<std::sync::atomic::AtomicBool> {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    std::thread::spawn(move || {
        match seconds {
            Some(s) => std::thread::sleep(std::time::Duration::from_secs(s)),
            None => {
                let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
            }
        }
        flag.store(true, Ordering::Relaxed);
    });
    stop
}

/// Claims the emulated board in `dir` for this process, for `fleet bridge --qemu` and `live
/// --device qemu` alike: holds its lock (the returned file; one board, one process) and lets
/// QEMU make a new board only if `provision` and the directory has none yet. A board that has
/// lost its state is refused whatever `provision` says: QEMU would provision a fresh one, a
/// fresh budget. `refused` says why in the caller's words.
pub(crate) fn claim_board(
    dir: &Path,
    elf: &Path,
    provision: bool,
    refused: impl FnOnce(ldp_link::fleet::NotProvisionable) -> Usage,
) -> Result<std::fs::File, CliError> {
    let lock = ldp_link::fleet::lock_device_dir(dir).map_err(file(FileOp::Lock, dir))?;
    let marker = dir.join(ldp_link::transport::BOARD_MARKER);
    let state = dir.join(ldp_link::transport::STATE_FILE);
    if ldp_link::fleet::may_provision(&state, &marker, provision).map_err(refused)? {
        ldp_link::fleet::write_synced(&marker, &format!("firmware = {}\n", elf.display()))
            .map_err(file(FileOp::Write, &marker))?;
    }
    Ok(lock)
}

/// `host-sim fleet bridge`: connects to the board, prints its hello, bridges it until stdin
/// closes or --seconds pass, prints a summary.
pub(crate) fn fleet_bridge(args: BridgeArgs) -> Result<(), CliError> {
    use ldp_link::bridge::{Bridge, BridgeStats};
    use ldp_link::mqtt::BrokerUrl;
    use ldp_link::transport::{Link, QemuDevice, SerialLink, TcpLink, build_firmware};

    fn serve<L: Link>(
        link: L,
        auth: ldp_core::wire::Auth,
        broker: &BrokerUrl,
        seconds: Option<u64>,
    ) -> Result<BridgeStats, CliError> {
        let bridge = Bridge::new(link, auth)?;
        let hello = *bridge.hello();
        say!(
            "board {} (topics ldp/{}/...): B = {}, R = {}, eps {} per report, budget left {} of {}",
            hello.device_id,
            hello.device_id,
            hello.config.b.get(),
            hello.config.r.get(),
            hello.config.policy.per_report_limit().get(),
            hello.budget_remaining,
            hello.config.policy.total().get()
        );
        match seconds {
            Some(s) => say!("bridging it to {broker} for {s} s"),
            None => say!("bridging it to {broker} until stdin closes (Ctrl-D)"),
        }
        Ok(bridge.serve(broker, &stop_flag(seconds))?)
    }

    let broker = BrokerUrl::parse(&args.broker)?;
    let stats = if let Some(elf) = args.qemu {
        let elf = match elf {
            Some(elf) => elf,
            None => {
                say!("building the firmware ...");
                build_firmware(&[])?
            }
        };
        let fresh = args.dir.is_none();
        let dir = args.dir.unwrap_or_else(|| {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            std::env::temp_dir().join(format!("ldp-board-{}-{nanos}", std::process::id()))
        });
        let _lock = claim_board(&dir, &elf, fresh || args.provision, |why| Usage::Provision {
            dir: dir.clone(),
            why,
        })?;
        say!("booting {} under QEMU in {}", elf.display(), dir.display());
        let mut qemu = QemuDevice::start(&elf, &dir).map_err(CliError::System)?;
        let link = qemu.connect().map_err(CliError::System)?;
        let auth = qemu.auth().map_err(CliError::System)?;
        serve(link, auth, &broker, args.seconds)?
    } else if let Some(path) = args.serial {
        let auth = host_sim::experiments::runner::single_device_auth()?;
        let link = SerialLink::open(&path).map_err(|source| CliError::Connect { target: path, source })?;
        serve(link, auth, &broker, args.seconds)?
    } else if let Some(addr) = args.tcp {
        let auth = host_sim::experiments::runner::single_device_auth()?;
        let link = TcpLink::connect(&addr, std::time::Duration::from_secs(10))
            .map_err(|source| CliError::Connect { target: format!("the board at {addr}"), source })?;
        serve(link, auth, &broker, args.seconds)?
    } else {
        return Err(Usage::NoBoard.into());
    };
    say!(
        "stopped: {} queries to the board ({} dropped: retained, or not one frame), {} frames from it, {} hellos, \
         {} connection(s), {} publishes dropped; budget left {}",
        stats.queries,
        stats.dropped_queries,
        stats.reports,
        stats.hellos,
        stats.connections,
        stats.dropped_publishes,
        stats.budget_remaining
    );
    Ok(())
}

/// `host-sim fleet bench`: runs the benchmark, prints the table, writes --json.
pub(crate) fn fleet_bench(args: BenchArgs) -> Result<(), CliError> {
    use host_sim::fleet_bench::{BenchSpec, run_bench};
    use ldp_link::mqtt::BrokerUrl;

    let broker =
        if args.broker.eq_ignore_ascii_case("none") { None } else { Some(BrokerUrl::parse(&args.broker)?) };
    let spec = BenchSpec {
        broker,
        sizes: args.devices,
        rounds: args.rounds,
        warmup: args.warmup,
        inflight: args.inflight,
        queries: args.queries,
        in_process: args.in_process,
        learn: args.learn,
    };
    let report = run_bench(&spec, |what| eprintln!("{what}"))?;
    print!("{}", report.table());
    if let Some(path) = args.json {
        let text = serde_json::to_string_pretty(&report)?;
        std::fs::write(&path, text + "\n").map_err(file(FileOp::Write, &path))?;
        say!("wrote {}", path.display());
    }
    Ok(())
}
