//! The plots and tables people look at: `regret.png` beside `regret.svg`, uniform play as a
//! reference line, log-log axes, `replot` from the CSV drawing what the run drew, and the
//! summary table as text, Markdown and JSON.

use std::path::{Path, PathBuf};

use host_sim::experiments;
use host_sim::run::output::{TableFormat, render_table, summary_table, write_all, write_all_with};
use host_sim::run::plot::{PlotOptions, replot};
use host_sim::run::results::{AlgorithmResult, aggregate, with_uniform};
use host_sim::run::settings::RunConfig;

const TRIALS: usize = 4;
const HORIZON: usize = 1000;
const LEARNERS: [&str; 5] = ["GP-UCB", "LDP-TGP-UCB", "LDP-ATA-GP-UCB", "LDP-MoMA-GP-UCB", "UCB1"];

fn temp(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("host-sim-plot-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn config() -> RunConfig {
    let mut config = experiments::find("fig3a").unwrap().default_config();
    config.trials = TRIALS;
    config.horizon = HORIZON;
    config
}

/// A result for each of `labels`, the a-th's regret in `trial` at round t `regret(a, trial, t)`,
/// and uniform play's straight line.
fn results_of(
    config: &RunConfig,
    labels: &[&str],
    regret: impl Fn(f64, f64, f64) -> f64,
) -> Vec<AlgorithmResult> {
    let rows = labels
        .iter()
        .enumerate()
        .map(|(a, label)| {
            let curves: Vec<Vec<f64>> = (0..TRIALS)
                .map(|trial| (0..HORIZON).map(|t| regret(a as f64, trial as f64, t as f64)).collect())
                .collect();
            aggregate(label.to_string(), &curves, 0.5)
        })
        .collect();
    with_uniform(config, rows, |_| Ok((1..=HORIZON).map(|t| 0.2 * t as f64).collect())).unwrap()
}

/// Five learners of √t-like regret that differ by trial, and uniform play's straight line.
fn results(config: &RunConfig) -> Vec<AlgorithmResult> {
    results_of(config, &LEARNERS, |a, trial, t| {
        let scale = 2.0 + a + 0.3 * trial;
        // Zero regret in round 1: the log-log plot must leave that point out.
        scale * t.sqrt() * (1.0 + 0.1 * (t / 50.0).sin())
    })
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Whether `svg` draws the text `s` (plotters puts a text on its own line).
fn draws_text(svg: &str, s: &str) -> bool {
    svg.contains(&format!(">\n{s}\n</text>"))
}

fn svg_text(dir: &Path) -> String {
    String::from_utf8(read(&dir.join("regret.svg"))).unwrap()
}

#[test]
fn a_run_writes_a_png_beside_the_svg() {
    let (dir, config) = (temp("png"), config());
    let files = write_all(&dir, "fig3a", "test", &config, &results(&config)).unwrap();
    let names: Vec<_> = files.iter().filter_map(|f| f.file_name()?.to_str()).collect();
    assert_eq!(names, ["regret.csv", "finals.csv", "run.json", "regret.svg", "regret.png"]);

    let bytes = read(&dir.join("regret.png"));
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
    assert!(bytes.len() > 20_000, "a plot of six curves is more than {} bytes", bytes.len());
    let mut reader = png::Decoder::new(std::io::Cursor::new(&bytes)).read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size()];
    let frame = reader.next_frame(&mut pixels).unwrap();
    let (width, height) = (frame.width as usize, frame.height as usize);
    assert_eq!(height, 600);
    assert!(width > 900, "the plot area is 900 wide and the legend stands beside it: {width}");
    let svg = svg_text(&dir);
    assert!(svg.contains(&format!("width=\"{width}\" height=\"{height}\"")), "SVG and PNG are the same size");

    let rgb = |x: usize, y: usize| {
        let i = (y * width + x) * 3;
        (pixels[i], pixels[i + 1], pixels[i + 2])
    };
    // The title, drawn with the embedded font, darkens the top strip; the first learner's
    // colour (Okabe–Ito blue) is somewhere in the plot.
    let dark_title =
        (0..width).flat_map(|x| (0..25).map(move |y| (x, y))).filter(|&(x, y)| rgb(x, y).0 < 100);
    assert!(dark_title.count() > 200, "title text is drawn");
    let blue = (0..height)
        .flat_map(|y| (0..width).map(move |x| (x, y)))
        .filter(|&(x, y)| rgb(x, y) == (0, 114, 178));
    assert!(blue.count() > 500, "the first learner's line is drawn");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn uniform_play_is_a_labelled_grey_dashed_line_without_a_band() {
    let (dir, config) = (temp("uniform"), config());
    write_all(&dir, "fig3a", "test", &config, &results(&config)).unwrap();
    let svg = svg_text(&dir);
    assert!(draws_text(&svg, "uniform play"), "the legend names uniform play");
    assert!(svg.contains("stroke=\"#6E6E6E\""), "uniform play is grey");
    for label in LEARNERS {
        assert!(draws_text(&svg, label), "{label} in the legend");
    }
    // Bands: one per learner in the plot and one swatch per learner in the legend; none for
    // uniform play.
    assert_eq!(svg.matches("opacity=\"0.15\"").count(), 2 * LEARNERS.len());
    assert!(svg.contains(&format!("mean ± 1 s.e. over {TRIALS} trials")), "the axis says what the bands are");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn log_log_plots_have_decade_ticks_and_skip_zero_regret() {
    let (dir, config) = (temp("loglog"), config());
    let options = PlotOptions { log_log: true };
    write_all_with(&dir, "fig3a", "test", &config, &results(&config), &options).unwrap();
    let svg = svg_text(&dir);
    for decade in ["1", "10", "100", "1000"] {
        assert!(draws_text(&svg, decade), "x tick {decade} in the log-log plot");
    }
    assert!(!svg.contains("NaN") && !svg.contains("inf"), "no point of zero regret is drawn");
    let linear = temp("linear");
    write_all(&linear, "fig3a", "test", &config, &results(&config)).unwrap();
    assert_ne!(svg, svg_text(&linear), "the option changes the plot");
    let _ = std::fs::remove_dir_all(dir);
    let _ = std::fs::remove_dir_all(linear);
}

/// Issue #38: uniform play far above the learners (here 100× their final regret) flattens
/// them on a linear axis; where the final values span more than a decade the regret axis is
/// logarithmic (decade ticks), and where they do not it stays linear.
#[test]
fn a_regret_axis_is_logarithmic_where_the_final_values_span_a_decade() {
    let config = config();
    let far = with_uniform(&config, results(&config).into_iter().filter(|r| !r.reference).collect(), |_| {
        Ok((1..=HORIZON).map(|t| 20.0 * t as f64).collect())
    })
    .unwrap();
    let (dir, linear) = (temp("logy"), temp("logy-linear"));
    write_all(&dir, "fig3a", "test", &config, &far).unwrap();
    let svg = svg_text(&dir);
    for decade in ["10", "100", "10000"] {
        assert!(draws_text(&svg, decade), "y tick {decade} on the log regret axis");
    }
    assert!(draws_text(&svg, "500"), "the rounds stay linear");
    assert!(!svg.contains("NaN") && !svg.contains("inf"));
    write_all(&linear, "fig3a", "test", &config, &results(&config)).unwrap();
    assert!(!draws_text(&svg_text(&linear), "10"), "finals within a decade: a linear axis");
    let _ = std::fs::remove_dir_all(dir);
    let _ = std::fs::remove_dir_all(linear);
}

#[test]
fn replot_from_the_csv_draws_what_the_run_drew() {
    let config = config();
    let results = results(&config);
    for (tag, options) in [("replot", PlotOptions::default()), ("replot-log", PlotOptions { log_log: true })]
    {
        let dir = temp(tag);
        write_all_with(&dir, "fig3a", "test", &config, &results, &options).unwrap();
        let (svg, png) = (read(&dir.join("regret.svg")), read(&dir.join("regret.png")));
        let csv = read(&dir.join("regret.csv"));
        std::fs::remove_file(dir.join("regret.svg")).unwrap();
        std::fs::remove_file(dir.join("regret.png")).unwrap();

        let files = replot(&dir, &options).unwrap();
        assert_eq!(files, [dir.join("regret.svg"), dir.join("regret.png")]);
        assert!(read(&dir.join("regret.svg")) == svg, "{tag}: the SVG differs from the run's");
        assert!(read(&dir.join("regret.png")) == png, "{tag}: the PNG differs from the run's");
        assert_eq!(read(&dir.join("regret.csv")), csv, "replot leaves the CSV alone");
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[test]
fn replot_without_run_json_still_draws_uniform_play_as_the_reference() {
    let (dir, config) = (temp("nojson"), config());
    write_all(&dir, "fig3a", "test", &config, &results(&config)).unwrap();
    std::fs::remove_file(dir.join("run.json")).unwrap();
    replot(&dir, &PlotOptions::default()).unwrap();
    let svg = svg_text(&dir);
    assert!(svg.contains("mean ± 1 sd"), "without the trials, the bands are ± 1 sd and say so");
    assert!(svg.contains("stroke=\"#6E6E6E\"") && draws_text(&svg, "uniform play"));
    assert_eq!(svg.matches("opacity=\"0.15\"").count(), 2 * LEARNERS.len());
    let _ = std::fs::remove_dir_all(dir);
}

/// `replot`'s error for `dir` whose regret.csv is `csv`.
fn replot_error(tag: &str, csv: Option<&str>) -> String {
    let dir = temp(tag);
    std::fs::create_dir_all(&dir).unwrap();
    if let Some(csv) = csv {
        std::fs::write(dir.join("regret.csv"), csv).unwrap();
    }
    let message = replot(&dir, &PlotOptions::default()).unwrap_err().to_string();
    assert!(message.contains(&dir.join("regret.csv").display().to_string()), "names the file: {message}");
    for word in ["Error", "ParseFloat", "Os {", "kind:"] {
        assert!(!message.contains(word), "no Rust words in: {message}");
    }
    assert!(!dir.join("regret.svg").exists(), "{tag}: nothing drawn");
    let _ = std::fs::remove_dir_all(dir);
    message
}

#[test]
fn a_missing_or_garbled_csv_is_an_error_naming_the_file_and_line() {
    let header = "t,A_mean,A_std,uniform play_mean,uniform play_std\n";
    let cases: &[(&str, Option<String>, &str)] = &[
        ("missing", None, "there is no such file"),
        ("empty", Some(String::new()), "the file is empty"),
        ("header", Some("round,A\n1,2\n".into()), "line 1: expected a header `t,<learner>_mean"),
        ("pairs", Some("t,A_mean,B_std\n1,2,3\n".into()), "line 1: columns 2 and 3 should be"),
        ("no-rows", Some(header.into()), "line 2: no rounds after the header"),
        (
            "ragged",
            Some(format!("{header}1,0.5,0.1,1,0\n2,1.0,0.2\n")),
            "line 3: 3 values, but the header names 5",
        ),
        (
            "not-a-number",
            Some(format!("{header}1,0.5,0.1,1,0\n2,abc,0.2,2,0\n")),
            "line 3: column 2 (A_mean): `abc` is not a number",
        ),
        (
            "round",
            Some(format!("{header}1,0.5,0.1,1,0\n3,1.0,0.2,2,0\n")),
            "line 3: column t: expected round 2, found `3`",
        ),
    ];
    for (tag, csv, expected) in cases {
        let message = replot_error(tag, csv.as_deref());
        assert!(message.starts_with("cannot read "), "{tag}: {message}");
        assert!(message.contains(expected), "{tag}: expected `{expected}` in: {message}");
    }
}

#[test]
fn a_garbled_run_json_is_an_error_naming_it_and_the_line() {
    let (dir, config) = (temp("badjson"), config());
    write_all(&dir, "fig3a", "test", &config, &results(&config)).unwrap();
    std::fs::write(dir.join("run.json"), "{\n  \"experiment\": \"fig3a\",\n  oops\n}\n").unwrap();
    let message = replot(&dir, &PlotOptions::default()).unwrap_err().to_string();
    assert!(message.contains(&dir.join("run.json").display().to_string()), "{message}");
    assert!(message.contains("line 3"), "{message}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_text_table_is_unchanged_and_markdown_and_json_carry_the_same_rows() {
    let config = config();
    let results = results(&config);
    assert_eq!(render_table(&results, TRIALS, TableFormat::Text), summary_table(&results, TRIALS));

    let markdown = render_table(&results, TRIALS, TableFormat::Markdown);
    let lines: Vec<&str> = markdown.lines().collect();
    assert_eq!(lines[0], "| algorithm | final R_T | sd | s.e. | vs uniform | vs UCB1 | s/trial | flag |");
    assert_eq!(lines[1], "|---|---:|---:|---:|---:|---:|---:|---|");
    let ucb1 = results.iter().find(|r| r.label == "UCB1").map(|r| r.mean[HORIZON - 1]);
    assert_eq!(lines.len(), 2 + results.len(), "a row per learner and uniform play:\n{markdown}");
    for (line, r) in lines[2..].iter().zip(&results) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        assert_eq!(cells[0], r.label);
        assert_eq!(cells[1], format!("{:.2}", r.mean[HORIZON - 1]));
        assert_eq!(cells[4], r.vs_uniform().map_or("-".to_string(), |x| format!("{x:.3}")));
        let vs_ucb1 = ucb1.filter(|_| !r.reference).map(|u| r.mean[HORIZON - 1] / u);
        assert_eq!(cells[5], vs_ucb1.map_or("-".to_string(), |x| format!("{x:.3}")));
        assert_eq!(cells[7], if r.worse_than_uniform() { "worse than uniform" } else { "" });
    }

    let json: serde_json::Value =
        serde_json::from_str(&render_table(&results, TRIALS, TableFormat::Json)).unwrap();
    assert_eq!(json["trials"], TRIALS);
    let rows = json["rows"].as_array().unwrap();
    assert_eq!(rows.len(), results.len());
    for (row, r) in rows.iter().zip(&results) {
        let sd = r.std[HORIZON - 1];
        assert_eq!(row["algorithm"], r.label.as_str());
        assert_eq!(row["final_mean"].as_f64(), Some(r.mean[HORIZON - 1]), "full precision");
        assert_eq!(row["sd"].as_f64(), Some(sd));
        assert_eq!(row["se"].as_f64(), Some(sd / (TRIALS as f64).sqrt()));
        assert_eq!(row["vs_uniform"].as_f64(), r.vs_uniform());
        assert_eq!(row["vs_ucb1"].as_f64(), ucb1.filter(|_| !r.reference).map(|u| r.mean[HORIZON - 1] / u));
        assert_eq!(
            row["seconds_per_trial"].as_f64(),
            Some(0.5 * f64::from(u8::from(!r.reference)) / TRIALS as f64)
        );
        assert_eq!(row["reference"], r.reference);
        assert_eq!(row["worse_than_uniform"], r.worse_than_uniform());
    }
}

/// A sweep as Tao et al.'s `tao-s1` labels it: two settings (v), two budgets (ε) of two
/// learners, one learner without a budget, and uniform play.
fn sweep_results(config: &RunConfig) -> Vec<AlgorithmResult> {
    let labels = [
        "Robust-UCB v=0.5",
        "DP-RUCB v=0.5 eps=0.5",
        "DP-RSE v=0.5 eps=0.5",
        "DP-RUCB v=0.5 eps=1",
        "DP-RSE v=0.5 eps=1",
        "Robust-UCB v=0.9",
        "DP-RUCB v=0.9 eps=0.5",
        "DP-RSE v=0.9 eps=0.5",
        "DP-RUCB v=0.9 eps=1",
        "DP-RSE v=0.9 eps=1",
    ];
    results_of(config, &labels, |a, trial, t| (1.0 + a + 0.2 * trial) * t.sqrt())
}

#[test]
fn a_sweep_is_drawn_a_panel_per_setting_with_uniform_play_in_each_and_regret_against_eps() {
    let (dir, config) = (temp("sweep"), config());
    let files = write_all(&dir, "tao-s1", "a sweep", &config, &sweep_results(&config)).unwrap();
    let names: Vec<_> = files.iter().filter_map(|f| f.file_name()?.to_str()).collect();
    assert!(names.contains(&"regret_vs_eps.svg") && names.contains(&"regret_vs_eps.png"), "{names:?}");
    let svg = svg_text(&dir);
    // One panel per setting, titled by it; the legend names learner and budget once each.
    assert!(draws_text(&svg, "v = 0.5") && draws_text(&svg, "v = 0.9"));
    for entry in ["Robust-UCB", "DP-RUCB ε = 0.5", "DP-RSE ε = 0.5", "DP-RUCB ε = 1", "DP-RSE ε = 1"] {
        assert_eq!(svg.matches(&format!(">\n{entry}\n</text>")).count(), 1, "{entry} once in the legend");
    }
    // No colour reused: the five learner-and-budget keys take five palette colours.
    for colour in ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00"] {
        assert!(svg.contains(colour), "{colour}");
    }
    // Uniform play in each panel (grey #6E6E6E): two lines and the legend's sample.
    let grey = svg.matches("stroke=\"#6E6E6E\"").count();
    assert!(grey >= 3, "uniform play drawn {grey} times");
    let vs = String::from_utf8(read(&dir.join("regret_vs_eps.svg"))).unwrap();
    assert!(vs.contains("final regret against ε"), "the vs-ε figure names its axis");
    assert!(draws_text(&vs, "0.5") && draws_text(&vs, "1"), "a tick per budget");
    assert!(draws_text(&vs, "v = 0.5") && draws_text(&vs, "v = 0.9"));
    let _ = std::fs::remove_dir_all(dir);
}

/// Issue #38: the regret-against-ε figure's regret axis is logarithmic where its points span more
/// than a decade (a learner 40–360× another's), and stays linear where they do not.
#[test]
fn the_regret_against_eps_axis_is_logarithmic_where_the_points_span_a_decade() {
    let config = config();
    let labels = ["Robust-UCB v=0.5", "DP-RUCB v=0.5 eps=0.5", "DP-RSE v=0.5 eps=0.5", "DP-RUCB v=0.5 eps=1"];
    let wide = results_of(&config, &labels, |a, trial, t| {
        (if a < 1.0 { 1.0 + 0.2 * trial } else { 40.0 * a * a }) * t.sqrt()
    });
    let (dir, linear) = (temp("vs-eps-log"), temp("vs-eps-linear"));
    write_all(&dir, "tao-s1", "a sweep", &config, &wide).unwrap();
    let vs = String::from_utf8(read(&dir.join("regret_vs_eps.svg"))).unwrap();
    for decade in ["100", "1000", "10000"] {
        assert!(draws_text(&vs, decade), "y tick {decade} on the log regret axis");
    }
    assert!(!vs.contains("NaN") && !vs.contains("inf"));
    write_all(&linear, "tao-s1", "a sweep", &config, &sweep_results(&config)).unwrap();
    let vs = String::from_utf8(read(&linear.join("regret_vs_eps.svg"))).unwrap();
    assert!(!draws_text(&vs, "1000") && draws_text(&vs, "0"), "points within a decade: a linear axis from 0");
    let _ = std::fs::remove_dir_all(dir);
    let _ = std::fs::remove_dir_all(linear);
}

#[test]
fn a_run_that_is_no_sweep_gets_no_regret_against_eps_figure() {
    let (dir, config) = (temp("nosweep"), config());
    write_all(&dir, "fig3a", "test", &config, &results(&config)).unwrap();
    assert!(!dir.join("regret_vs_eps.svg").exists());
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn plot_out_writes_the_named_file_only_with_the_given_title() {
    use host_sim::run::plot::replot_to;
    let (dir, config) = (temp("out"), config());
    write_all(&dir, "tao-s1", "a sweep", &config, &sweep_results(&config)).unwrap();
    let before = read(&dir.join("regret.svg"));
    let out = dir.join("figures").join("fig1.svg");
    let files = replot_to(&dir, &PlotOptions { log_log: true }, Some(&out), Some("Fig. 1, log-log")).unwrap();
    assert_eq!(files, [out.clone(), dir.join("figures").join("fig1_vs_eps.svg")]);
    assert_eq!(read(&dir.join("regret.svg")), before, "--out leaves the run's own plot alone");
    assert!(!dir.join("figures").join("fig1.png").exists());
    assert!(draws_text(&String::from_utf8(read(&out)).unwrap(), "Fig. 1, log-log"));
    let message =
        replot_to(&dir, &PlotOptions::default(), Some(&dir.join("fig1.pdf")), None).unwrap_err().to_string();
    assert!(message.contains("not .pdf") && message.contains(".svg or .png"), "{message}");
    let _ = std::fs::remove_dir_all(dir);
}

/// Issue #38: a variant's title (its key and constants added to its experiment's description)
/// ran off both edges of a one-panel figure; a title wider than the figure is drawn smaller,
/// and a title that fits keeps its size.
#[test]
fn a_title_wider_than_the_figure_is_drawn_smaller_to_fit() {
    use host_sim::run::plot::replot_to;
    let (dir, config) = (temp("long-title"), config());
    write_all(&dir, "fig3a", "test", &config, &results(&config)).unwrap();
    let title_size = |svg: &str| -> f64 {
        let first = svg.split("<text").nth(1).unwrap_or_default();
        let size = first.split("font-size=\"").nth(1).and_then(|s| s.split('"').next()).unwrap_or_default();
        size.parse().unwrap_or(f64::NAN)
    };
    let short = title_size(&svg_text(&dir));
    let long = "a very long title: ".repeat(12);
    let out = dir.join("long.svg");
    replot_to(&dir, &PlotOptions::default(), Some(&out), Some(&long)).unwrap();
    let svg = String::from_utf8(read(&out)).unwrap();
    assert!(svg.contains("a very long title"), "the title is drawn");
    let smaller = title_size(&svg);
    assert!(smaller < 0.75 * short, "{smaller} against {short}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn titles_name_a_sweeps_grid_and_show_no_directories() {
    let tao = experiments::find("tao-s1").unwrap();
    assert_eq!(tao.privacy_note(tao.epsilon), "", "the description names the grid eps in {{0.5, 1}}");
    let half = ldp_core::Epsilon::new(0.5).unwrap();
    assert_eq!(tao.privacy_note(Some(half)), "eps = 0.5 only");
    let fig = experiments::find("fig2a").unwrap();
    assert_eq!(fig.privacy_note(fig.epsilon), "eps = 1");
    assert_eq!(fig.privacy_note(None), "non-private");
    assert_eq!(host_sim::run::files::shown_name(Path::new("/home/someone/data/prices.csv")), "prices.csv");
}

#[test]
fn reproduce_copies_each_runs_figures_beside_the_report() {
    use host_sim::run::plot::copy_figures_beside;
    let (out, config) = (temp("beside"), config());
    let run = out.join("tao-s1");
    write_all(&run, "tao-s1", "a sweep", &config, &sweep_results(&config)).unwrap();
    let files = copy_figures_beside(&run, &out, "tao-s1").unwrap();
    let names: Vec<_> = files.iter().filter_map(|f| f.file_name()?.to_str()).collect();
    assert_eq!(names, ["tao-s1.svg", "tao-s1.png", "tao-s1_vs_eps.svg", "tao-s1_vs_eps.png"]);
    assert_eq!(read(&out.join("tao-s1.png")), read(&run.join("regret.png")));
    // A run without an ε sweep has no regret-versus-ε figure to copy.
    let plain = out.join("fig3a");
    write_all(&plain, "fig3a", "test", &config, &results(&config)).unwrap();
    assert_eq!(copy_figures_beside(&plain, &out, "fig3a").unwrap().len(), 2);
    let _ = std::fs::remove_dir_all(out);
}
