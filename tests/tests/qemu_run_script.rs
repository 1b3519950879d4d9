//! `firmware-example/qemu-run.sh`, the script `cargo run` starts the firmware with, as a user
//! runs it: it provisions a new board in the current directory (seed from OS entropy, the
//! learner's key computed from it with openssl), boots it with USART1 on
//! `127.0.0.1:$LDP_QEMU_PORT`, keeps every secret file its owner's only, boots the same board
//! again in the same directory (same key, next boot number, budget carried over), and refuses to
//! make a new board where one has lost its state.
//!
//! Skips with a printed reason when QEMU, the thumbv7em target or openssl is missing, unless
//! REQUIRE_QEMU=1 (CI), when that is a failure.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod common;

use ldp_core::Epsilon;
use ldp_link::client::WireClient;
use ldp_link::transport::{TcpLink, board_auth};

/// The script, started in `dir` on `elf` with USART1 on `port`.
fn start(script: &Path, elf: &Path, dir: &Path, port: u16) -> Child {
    Command::new("bash")
        .arg(script)
        .arg(elf)
        .current_dir(dir)
        .env("LDP_QEMU_PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bash runs")
}

/// A free loopback port.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A client of the board the script runs in `dir`, once its USART1 listens.
fn connect(child: &mut Child, dir: &Path, port: u16) -> WireClient<TcpLink> {
    let start = Instant::now();
    let link = loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
            panic!("qemu-run.sh exited ({status}): {err}");
        }
        match TcpLink::connect(&format!("127.0.0.1:{port}"), Duration::ZERO) {
            Ok(link) => break link,
            Err(e) if start.elapsed() > Duration::from_secs(20) => panic!("no USART1 on {port}: {e}"),
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    let auth = board_auth(dir).expect("the script wrote the board's key");
    let mut client = WireClient::new(link, auth);
    client.tries = 20; // the emulator may still be booting
    client
}

fn stop(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

#[cfg(unix)]
fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn qemu_run_sh_provisions_boots_again_and_refuses_a_lost_board() {
    let Some(elf) = common::firmware(&[]) else { return };
    if Command::new("openssl").arg("version").output().is_err() {
        let reason = "openssl is not installed (qemu-run.sh computes the learner's key with it)";
        assert!(std::env::var_os("REQUIRE_QEMU").is_none_or(|v| v != "1"), "REQUIRE_QEMU=1 but {reason}");
        eprintln!("skipping this QEMU test: {reason}");
        return;
    }
    let script: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join("../firmware-example/qemu-run.sh");
    let dir = common::fresh_dir("qemu-run-sh");
    std::fs::create_dir_all(&dir).unwrap();
    let eps = Epsilon::new(1.0).unwrap();

    // A new board: provisioned, its key for the learner, answered under that key.
    let port = free_port();
    let mut child = start(&script, &elf, &dir, port);
    let mut client = connect(&mut child, &dir, port);
    let hello = client.hello().unwrap_or_else(|e| panic!("{e}"));
    let first_boot = hello.session;
    let report = client.query(1, 3, eps, None).unwrap().unwrap();
    assert!(report.budget_remaining < hello.budget_remaining);
    let key = std::fs::read_to_string(dir.join("ldp-link.key")).unwrap();
    assert!(key.starts_with("5495605612387500033 "), "the firmware's device id: {key}");
    assert!(dir.join("board.txt").is_file());
    assert!(!dir.join("ldp-provision.bin").exists(), "the seed request is used once");
    #[cfg(unix)]
    for file in ["ldp-link.key", "ldp-state.bin"] {
        assert_eq!(mode(&dir.join(file)), 0o600, "{file}");
    }
    drop(client);
    stop(child);

    // The same board again: same key, the next boot, no budget back.
    let port = free_port();
    let mut child = start(&script, &elf, &dir, port);
    let mut client = connect(&mut child, &dir, port);
    let again = client.hello().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(again.session, first_boot + 1);
    assert!(again.budget_remaining <= report.budget_remaining);
    assert_eq!(std::fs::read_to_string(dir.join("ldp-link.key")).unwrap(), key);
    drop(client);
    stop(child);

    // The board's state lost: the script makes no new board here.
    std::fs::remove_file(dir.join("ldp-state.bin")).unwrap();
    let child = start(&script, &elf, &dir, free_port());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("lost its state") && err.contains("new directory"), "{err}");
    assert!(!dir.join("ldp-state.bin").exists() && !dir.join("ldp-provision.bin").exists());
    let _ = std::fs::remove_dir_all(&dir);
}
