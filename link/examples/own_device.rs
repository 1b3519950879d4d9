//! Talks to your own device over a serial port (`docs/your-device.md`): the handshake, then one
//! query per action at ε = 0.5, printing each release or refusal. Every report spends ε of the
//! device's lifetime budget.
//!
//! The device's key comes from the key file its provisioning wrote (`LDP_KEYS`, see
//! `docs/wire-format.md`, *Keys*).
//!
//! ```sh
//! LDP_KEYS=board.key cargo run --release -p ldp-link --example own_device -- /dev/ttyACM0 6   # port, actions
//! ```

use ldp_core::Epsilon;
use ldp_link::client::WireClient;
use ldp_link::transport::SerialLink;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let port = args.next().unwrap_or_else(|| "/dev/ttyACM0".to_string());
    let actions: u32 = args.next().map_or(Ok(6), |n| n.parse())?;
    let auth = ldp_link::keys::single_device_auth()?;
    let mut device = WireClient::new(SerialLink::open(&port)?, auth);
    let hello = device.hello()?;
    println!(
        "device {:#x}: B = {}, R = {}, per-report ε at most {}, {} ε left",
        hello.device_id,
        hello.config.b.get(),
        hello.config.r.get(),
        hello.config.policy.per_report_limit().get(),
        hello.budget_remaining
    );
    let epsilon = Epsilon::new(0.5)?;
    for action in 0..actions {
        match device.query(action + 1, action, epsilon, None)? {
            Ok(report) => println!(
                "action {action}: released {} ({} ε left)",
                report.release.value(),
                report.budget_remaining
            ),
            Err(refusal) => println!("action {action}: refused: {refusal}"),
        }
    }
    Ok(())
}
