//! `host-sim privatise`: push a stream of raw rewards through the device's production reporter
//! and measure what was released — the quickest honest look at what CTL(ε) does to data — or
//! privatise a user's own table, cell by cell, with the same mechanism ([`privatise_table`]).

use ldp_core::{Bound, BudgetPolicy, DeviceConfig, Epsilon, ParamError, ReportError};
use rand::RngExt;
use rand_core::SeedableRng;

use ldp_learn::env::SimRng;

/// Settings of the privatisation demo.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PrivatiseConfig {
    /// Per-report ε.
    pub epsilon: f64,
    /// Number of reports.
    pub reports: u64,
    /// B: the raw reward's mean is drawn in [−B, B].
    pub b: f64,
    /// R: the raw reward is mean + U[−R, R].
    pub r: f64,
    /// Seed of the raw-reward stream and of the device's ChaCha20 generator.
    pub seed: u64,
}

impl Default for PrivatiseConfig {
    fn default() -> Self {
        Self { epsilon: 1.0, reports: 100_000, b: 1.0, r: 1.0, seed: 0 }
    }
}

/// What was released, next to what the theory predicts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PrivatiseSummary {
    /// The settings.
    pub config: PrivatiseConfig,
    /// Mean of the raw rewards (never released).
    pub raw_mean: f64,
    /// Variance of the raw rewards.
    pub raw_variance: f64,
    /// Mean of the released values.
    pub released_mean: f64,
    /// Variance of the released values.
    pub released_variance: f64,
    /// Noise variance of the mechanism (≈ 2𝓛², 𝓛 = 2(B+R)/ε).
    pub noise_variance: f64,
    /// The ε each report guarantees.
    pub epsilon_effective: f64,
    /// Total ε spent by the device.
    pub epsilon_spent: f64,
}

/// Errors of the demo: bad settings, or a refusal by the device.
#[derive(Debug, Clone, PartialEq)]
pub enum PrivatiseError {
    /// An invalid ε, B or R.
    Param(ParamError),
    /// The device refused a report (should not happen with the demo's own budget).
    Device(ReportError<core::convert::Infallible>),
    /// The operating system gave no entropy for the device's noise.
    Entropy(String),
    /// The privatised table could not be written as CSV.
    Csv(String),
    /// More reports at ε than the device's budget counter can pay for.
    Budget(ldp_learn::budget::BudgetError),
}

impl std::fmt::Display for PrivatiseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Param(e) => write!(f, "invalid setting: {e}"),
            Self::Device(e) => write!(f, "the device refused: {e}"),
            Self::Entropy(e) => write!(f, "no entropy from the operating system for the noise: {e}"),
            Self::Csv(e) => write!(f, "cannot write the privatised table: {e}"),
            Self::Budget(e) => write!(f, "invalid setting: {e}"),
        }
    }
}

impl std::error::Error for PrivatiseError {}

/// Runs the demo. Raw rewards are `f + U[−R, R]` with `f ~ U[−B, B]` fixed for the stream.
pub fn privatise(config: PrivatiseConfig) -> Result<PrivatiseSummary, PrivatiseError> {
    let p = PrivatiseError::Param;
    let epsilon = Epsilon::new(config.epsilon).map_err(p)?;
    let (b, r) = (Bound::new(config.b).map_err(p)?, Bound::new(config.r).map_err(p)?);
    let mechanism = ldp_core::LaplaceMechanism::ctl(epsilon, b, r).map_err(p)?;
    let reports = usize::try_from(config.reports).unwrap_or(usize::MAX);
    let total = ldp_learn::budget::total_for(epsilon, reports).map_err(PrivatiseError::Budget)?;
    let policy = BudgetPolicy::new(epsilon, total).map_err(p)?;
    let mut device = ldp_link::device::simulated_reporter(DeviceConfig { b, r, policy }, config.seed)
        .map_err(|e| PrivatiseError::Device(ReportError::Budget(e)))?;

    let mut world = <SimRng as SeedableRng>::seed_from_u64(config.seed);
    let f = world.random_range(-config.b..=config.b);
    let (mut raw, mut released) = (Moments::default(), Moments::default());
    for _ in 0..config.reports {
        let y = f + world.random_range(-config.r..=config.r);
        let report = device.report(y, epsilon, None).map_err(PrivatiseError::Device)?;
        raw.push(y);
        released.push(report.release.value());
    }
    Ok(PrivatiseSummary {
        config,
        raw_mean: raw.mean(),
        raw_variance: raw.variance(),
        released_mean: released.mean(),
        released_variance: released.variance(),
        noise_variance: mechanism.noise_variance(),
        epsilon_effective: mechanism.epsilon_effective(),
        epsilon_spent: device.accountant().spent(),
    })
}

/// What [`privatise_table`] released.
#[derive(Clone, Debug, PartialEq)]
pub struct TableRelease {
    /// The privatised table as CSV: the label column (if any) as it was, every arm column's
    /// observations replaced by their releases, missing cells left empty.
    pub csv: String,
    /// Observations released (one report each).
    pub reports: u64,
    /// Of them, outside [−(B+R), B+R]: clipped before the noise.
    pub clipped: u64,
    /// The noise's standard deviation.
    pub noise_sd: f64,
    /// The ε each release guarantees.
    pub epsilon_effective: f64,
}

/// Privatises every observation of `table` with the device's production reporter: CTL(ε)
/// with bounds `b` (on |f|) and `r` (on |η|), one report per cell at ε. The device's secret
/// comes from the operating system's entropy unless `seed` is given (then anyone who knows the
/// seed can recompute the noise and remove it, and two tables with one seed share their noise:
/// for tests only). The label column is written only with `keep_label`, and then as it is —
/// not privatised. The shape of the table (its header, rows and gaps) is released exactly.
pub fn privatise_table(
    table: &ldp_learn::env::table::Table,
    epsilon: f64,
    b: f64,
    r: f64,
    seed: Option<u64>,
    keep_label: bool,
) -> Result<TableRelease, PrivatiseError> {
    let p = PrivatiseError::Param;
    let eps = Epsilon::new(epsilon).map_err(p)?;
    let (bound, noise_bound) = (Bound::new(b).map_err(p)?, Bound::new(r).map_err(p)?);
    let mechanism = ldp_core::LaplaceMechanism::ctl(eps, bound, noise_bound).map_err(p)?;
    let cells = table.columns.iter().flatten().flatten().count();
    let total = ldp_learn::budget::total_for(eps, cells).map_err(PrivatiseError::Budget)?;
    let policy = BudgetPolicy::new(eps, total).map_err(p)?;
    let config = DeviceConfig { b: bound, r: noise_bound, policy };
    let budget = |e| PrivatiseError::Device(ReportError::Budget(e));
    let mut device = match seed {
        Some(seed) => ldp_link::device::simulated_reporter(config, seed).map_err(budget)?,
        None => {
            let (mut material, mut entropy) = ([0u8; 32], [0u8; 32]);
            getrandom::fill(&mut material).map_err(|e| PrivatiseError::Entropy(e.to_string()))?;
            getrandom::fill(&mut entropy).map_err(|e| PrivatiseError::Entropy(e.to_string()))?;
            ldp_core::Reporter::open(config, ldp_core::MemoryStore::provisioned(material), entropy)
                .map_err(budget)?
        }
    };
    let limit = b + r;
    let (mut reports, mut clipped) = (0, 0);
    let mut out = csv::Writer::from_writer(Vec::new());
    let csv_err = |e: csv::Error| PrivatiseError::Csv(e.to_string());
    let label = table.labels.as_ref().filter(|_| keep_label);
    let header: Vec<&str> = label
        .map(|(name, _)| name.as_str())
        .into_iter()
        .chain(table.names.iter().map(String::as_str))
        .collect();
    out.write_record(&header).map_err(csv_err)?;
    for row in 0..table.lines.len() {
        let mut record: Vec<String> = label.map(|(_, cells)| cells[row].clone()).into_iter().collect();
        for column in &table.columns {
            record.push(match column[row] {
                Some(y) => {
                    let report = device.report(y, eps, None).map_err(PrivatiseError::Device)?;
                    reports += 1;
                    clipped += u64::from(y.abs() > limit);
                    report.release.value().to_string()
                }
                None => String::new(),
            });
        }
        out.write_record(&record).map_err(csv_err)?;
    }
    let bytes = out.into_inner().map_err(|e| PrivatiseError::Csv(e.to_string()))?;
    Ok(TableRelease {
        csv: String::from_utf8_lossy(&bytes).into_owned(),
        reports,
        clipped,
        noise_sd: mechanism.noise_variance().sqrt(),
        epsilon_effective: mechanism.epsilon_effective(),
    })
}

/// Running mean and variance (Welford).
#[derive(Clone, Copy, Debug, Default)]
struct Moments {
    n: f64,
    mean: f64,
    m2: f64,
}

impl Moments {
    fn push(&mut self, x: f64) {
        self.n += 1.0;
        let d = x - self.mean;
        self.mean += d / self.n;
        self.m2 += d * (x - self.mean);
    }
    fn mean(&self) -> f64 {
        self.mean
    }
    fn variance(&self) -> f64 {
        if self.n > 1.0 { self.m2 / (self.n - 1.0) } else { 0.0 }
    }
}

impl std::fmt::Display for PrivatiseSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let c = &self.config;
        let n = c.reports as f64;
        writeln!(
            f,
            "CTL(ε) on {} reports: raw y = f + U[-R, R], B = {}, R = {}, ε = {}",
            c.reports, c.b, c.r, c.epsilon
        )?;
        writeln!(f, "  {:<28} {:>14} {:>14}", "", "raw (private)", "released")?;
        writeln!(f, "  {:<28} {:>14.5} {:>14.5}", "mean", self.raw_mean, self.released_mean)?;
        writeln!(f, "  {:<28} {:>14.5} {:>14.5}", "variance", self.raw_variance, self.released_variance)?;
        writeln!(
            f,
            "  predicted released variance = raw + 2𝓛² = {:.5}; its mean's std error = {:.5}",
            self.raw_variance + self.noise_variance,
            ((self.raw_variance + self.noise_variance) / n).sqrt()
        )?;
        writeln!(
            f,
            "  ε per report: requested {}, guaranteed {:.6}; device spent ε = {:.3} in total",
            c.epsilon, self.epsilon_effective, self.epsilon_spent
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn released_mean_and_variance_match_the_prediction() {
        let s = privatise(PrivatiseConfig { reports: 50_000, ..Default::default() }).unwrap();
        let predicted = s.raw_variance + s.noise_variance;
        let n = 50_000.0;
        // The clamp never binds here (|y| ≤ B + R), so the release is unbiased.
        assert!((s.released_mean - s.raw_mean).abs() < 5.33 * (s.noise_variance / n).sqrt());
        // Var of a sample variance of Laplace noise ≈ (μ4 − σ⁴)/n = 5σ⁴/n.
        assert!((s.released_variance - predicted).abs() < 5.33 * (5.0 * predicted * predicted / n).sqrt());
        assert!(s.epsilon_effective <= 1.0);
        assert!((s.epsilon_spent - n).abs() < 1e-6);
    }

    /// The stream's device pays every report: at ε = 0.3 the float 3·0.3 = 0.8999… holds 899 999 999
    /// units, one short of three reports of 300 000 000, and the third was refused.
    #[test]
    fn the_stream_pays_its_last_report() {
        for (epsilon, reports) in [(0.3, 3), (1.0 / 3.0, 3), (0.1, 10)] {
            let s = privatise(PrivatiseConfig { epsilon, reports, ..Default::default() }).unwrap();
            assert!(
                (s.epsilon_spent - epsilon * reports as f64).abs() < 1e-8,
                "{epsilon}: {}",
                s.epsilon_spent
            );
        }
    }

    #[test]
    fn bad_settings_are_typed_errors() {
        let bad = privatise(PrivatiseConfig { epsilon: -1.0, ..Default::default() });
        assert_eq!(bad, Err(PrivatiseError::Param(ParamError::EpsilonNotPositive)));
        let bad = privatise(PrivatiseConfig { r: f64::NAN, ..Default::default() });
        assert_eq!(bad, Err(PrivatiseError::Param(ParamError::BoundNotFinite)));
    }

    /// Review (pyreview): the total `(units·cells + 0.5)/1e9` falls one 1e-9 unit short at
    /// 814 429 cells at ε = 10.3 (units·cells = 8 388 618 700 000 000 lies in [2^52, 2^53), where
    /// `+ 0.5` is a tie rounded to even and `/1e9·1e9` lands one below): the last cell is refused
    /// and the whole table fails. 814 428 cells still pass.
    #[test]
    fn the_budget_pays_for_the_last_of_814_429_cells_at_eps_10_3() {
        for cells in [814_428usize, 814_429] {
            // Two arms (a table needs two), the odd cell alone on the last row.
            let odd = if cells % 2 == 1 { "0.5,\n" } else { "" };
            let text = format!("a,b\n{}{odd}", "0.5,0.5\n".repeat(cells / 2));
            let table = ldp_learn::env::table::Table::parse(&text).unwrap();
            assert_eq!(table.columns.iter().flatten().flatten().count(), cells);
            let out = privatise_table(&table, 10.3, 1.0, 0.5, Some(1), false);
            assert!(out.is_ok(), "{cells} cells: {:?}", out.err());
        }
    }

    /// The Python package's `ldp_bo.privatise` is this code path: python/tests/test_privatise.py
    /// (`test_privatise_is_host_sims_privatise_table`) expects the same releases for the same
    /// cells, ε, B, R and seed. A change here that it does not follow splits the two.
    #[test]
    fn seeded_table_releases_are_the_python_packages() {
        let table =
            ldp_learn::env::table::Table::parse("a,b\n0.3,-0.7\n1.25,2.5\n-3.5,0.0625\n0.1,-0.2\n").unwrap();
        let out = privatise_table(&table, 0.7, 1.0, 0.5, Some(4242), false).unwrap();
        let expected = "a,b\n1.094970703125,-5.22314453125\n-9.868408203125,1.78955078125\n\
                        -6.274658203125,-1.424560546875\n-6.921630859375,5.365966796875\n";
        assert_eq!(out.csv, expected);
    }
}
