//! The papers' data ship in the repository (`data/`): every real-data experiment runs from a
//! directory with nothing beside it, without `--data`, and a changed copy is refused.

use std::path::PathBuf;
use std::process::Command;

fn fresh_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("host-sim-data-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn every_real_data_experiment_runs_from_an_empty_directory_without_data_flags() {
    let cwd = fresh_dir("empty");
    assert!(
        !cwd.join("data").exists() && !cwd.join("../shared/data").exists(),
        "the directory must hold no data"
    );
    for experiment in ["fig2b", "fig2c", "fig2e", "fig2f", "fig3b", "fig3c"] {
        let out = Command::new(env!("CARGO_BIN_EXE_host-sim"))
            .current_dir(&cwd)
            .args(["run", experiment, "--trials", "2", "--horizon", "20", "--quiet", "--out", experiment])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{experiment}: {err}");
        assert!(cwd.join(experiment).join("run.json").is_file(), "{experiment}");
    }
    let _ = std::fs::remove_dir_all(cwd);
}

#[test]
fn a_changed_data_file_is_refused_by_name() {
    let dir = fresh_dir("changed");
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../data");
    let mut stocks = std::fs::read_to_string(data.join("stocks_adjclose.csv")).unwrap();
    stocks = stocks.replacen("99.49", "99.50", 1);
    std::fs::write(dir.join("stocks_adjclose.csv"), stocks).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_host-sim"))
        .args(["run", "fig2c", "--trials", "2", "--horizon", "20", "--quiet"])
        .arg("--data")
        .arg(&dir)
        .arg("--out")
        .arg(dir.join("out"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("stocks_adjclose.csv is not the papers' data set") && err.contains("SHA256SUMS"),
        "{err}"
    );
    assert!(!dir.join("out").join("run.json").exists());
    let _ = std::fs::remove_dir_all(dir);
}
