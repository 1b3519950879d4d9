//! The library route: `examples/own_objective.rs` (a closure over the user's domain, optimised
//! by LDP-MoMA-GP-UCB through the executor) runs and writes the same files as `host-sim run`.

#[allow(dead_code)] // its `main` is the example's
#[path = "../examples/own_objective.rs"]
mod example;

#[test]
fn the_closure_example_runs_and_writes_its_results() {
    let out = std::env::temp_dir().join(format!("host-sim-own-objective-{}", std::process::id()));
    let results = example::run(&out, 2, 100).unwrap();
    let labels: Vec<&str> = results.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(labels, ["LDP-MoMA-GP-UCB", "UCB1", "uniform play"]);
    // Uniform play's regret is exact: T·(max f − mean f) > 0, and every learner is judged by it.
    assert!(results.iter().all(|r| r.vs_uniform().is_some()));
    for f in ["regret.csv", "finals.csv", "run.json", "regret.svg"] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(record["config"]["epsilon"], 1.0);
    // B = max |f| over the 60 points: the higher bump's peak, 1, just missed by the grid.
    let b = record["results"][0]["constants"]["B"].as_f64().unwrap();
    assert!(b > 0.99 && b < 1.0, "B = {b}");
    let _ = std::fs::remove_dir_all(&out);
}
