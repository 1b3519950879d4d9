//! `host-sim privatise --input FILE`: a user's own table through the device's production
//! reporter, cell by cell — the releases are exactly the reporter's, row by row, the label
//! column and the gaps are kept, and a run without a bound is refused.

use host_sim::privatise::privatise_table;
use ldp_core::{Bound, BudgetPolicy, DeviceConfig, Epsilon};
use ldp_learn::env::table::Table;

#[test]
fn every_cell_is_one_release_of_the_devices_reporter_in_row_order() {
    let table = Table::parse("date,a,b\nd1,0.5,-0.25\nd2,,3.0\nd3,0.75,0.1\n").unwrap();
    let (eps, b, r, seed) = (0.5, 1.0, 0.5, 11);
    let release = privatise_table(&table, eps, b, r, Some(seed), true).unwrap();
    assert_eq!((release.reports, release.clipped), (5, 1), "3.0 lies beyond B + R = 1.5");
    // The same cells through the reporter the demo uses, in row order.
    let e = Epsilon::new(eps).unwrap();
    let policy = BudgetPolicy::new(e, Epsilon::new(eps * 5.0).unwrap()).unwrap();
    let config = DeviceConfig { b: Bound::new(b).unwrap(), r: Bound::new(r).unwrap(), policy };
    let mut device = ldp_link::device::simulated_reporter(config, seed).unwrap();
    let mut value = |y: f64| device.report(y, e, None).unwrap().release.value().to_string();
    let expected = format!(
        "date,a,b\nd1,{},{}\nd2,,{}\nd3,{},{}\n",
        value(0.5),
        value(-0.25),
        value(3.0),
        value(0.75),
        value(0.1)
    );
    assert_eq!(release.csv, expected);
    // The noise is the mechanism's: sd √2·2(B+R)/ε.
    assert!((release.noise_sd - 2f64.sqrt() * 2.0 * (b + r) / eps).abs() < 0.01 * release.noise_sd);
}

#[test]
fn the_cli_refuses_without_a_bound_and_writes_the_table_beside_the_input() {
    let dir = std::env::temp_dir().join(format!("host-sim-privatise-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("mine.tsv");
    std::fs::write(&input, "YEAR\tjan\tfeb\n1950\t1\t2\n1951\tNA\t3\n1952\t2\t1\n").unwrap();
    let run = |extra: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_host-sim"))
            .args([&["privatise", "--input", input.to_str().unwrap(), "--eps", "1"][..], extra].concat())
            .output()
            .unwrap();
        (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (ok, err) = run(&[]);
    assert!(!ok && err.contains("needs --bound B"), "{err}");
    // A known seed would make the noise removable: refused (review).
    let (ok, err) = run(&["--bound", "3", "--seed", "42"]);
    assert!(!ok && err.contains("takes no --seed"), "{err}");
    // The label column is raw data: left out unless asked for, and then said to be unprivatised.
    let (ok, err) = run(&["--bound", "3"]);
    assert!(ok && err.contains("released 5 observations") && err.contains("left out"), "{err}");
    let read = || std::fs::read_to_string(dir.join("mine.private.csv")).unwrap();
    let text = read();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "jan,feb");
    assert!(lines[2].starts_with(','), "{text}");
    assert_eq!(lines.len(), 4);
    // The values are released ones, not the raw ones (on the grid of B + R = 3 at eps = 1, the
    // raw integers would survive only by a 1-in-many chance each).
    let values: Vec<f64> =
        lines[1..].iter().flat_map(|l| l.split(',')).filter_map(|c| c.parse().ok()).collect();
    assert_eq!(values.len(), 5);
    assert_ne!(values, [1.0, 2.0, 3.0, 2.0, 1.0]);
    // Two runs draw their noise afresh from the OS.
    let (ok, err) = run(&["--bound", "3", "--keep-label"]);
    assert!(ok && err.contains("NOT privatised"), "{err}");
    let again = read();
    assert!(again.starts_with("YEAR,jan,feb\n1950,"), "{again}");
    assert_ne!(again.lines().nth(1).map(|l| l.split_once(',').map(|x| x.1)), lines.get(1).map(|l| Some(*l)));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The device charges each report rounded up to 10⁻⁹ of ε: an ε such as 1/3 must still cover
/// every cell (it ran out on the last one, review).
#[test]
fn an_awkward_eps_covers_every_cell() {
    let table = Table::parse("a,b\n0.1,0.2\n0.3,0.4\n").unwrap();
    for eps in [1.0 / 3.0, 2f64.sqrt(), 0.123_456_789_123, 0.001_000_000_000_1] {
        let release = privatise_table(&table, eps, 1.0, 0.0, Some(1), false);
        assert_eq!(release.map(|r| r.reports), Ok(4), "eps = {eps}");
    }
}

/// A headerless column named twice would be released twice (2ε per cell): refused (review).
#[test]
fn a_column_chosen_twice_is_refused() {
    use ldp_learn::env::table::{ReadOptions, TableProblem};
    let options = ReadOptions { columns: Some(vec!["1".into(), "1".into()]), ..ReadOptions::default() };
    assert_eq!(
        Table::parse_with(b"0.1,0.2\n0.3,0.4\n", &options).unwrap_err(),
        TableProblem::DuplicateName("1".into())
    );
}
