//! The papers' claims and their verdicts: each claim as its paper states it, decided by the
//! rules of the module's opening ([`super`]) on the runs of a reproduction.

use std::collections::BTreeMap;

use crate::experiments::bandit::{
    AGARWAL_BANDIT_EPSILONS, AGARWAL_EXPERTS_EPSILONS, TAO_CENTRAL_EPSILONS, TAO_LOCAL_EPSILONS, TAO_V,
};
use crate::experiments::dubey::{
    ALPHAS, BETAS, LOCAL_ALPHAS, PAPER_TABLE1, TABLE1_ALPHAS, TABLE1_BENCHMARKS,
};
use crate::run::results::{AlgorithmResult, mean_se, paired};

use super::{BANDIT_T, EXPERTS_T, FIG2A_LONG, Outcome, Planned, TABLE1_PAPER, ZHOU_TAN_CALIBRATED};

/// A claim and its verdict.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// The run the claim is about (its key).
    pub experiment: &'static str,
    /// The claim, in words.
    pub claim: String,
    /// Where it comes from.
    pub source: &'static str,
    /// Holds, does not hold, or could not be decided (`None`: the evidence says why).
    pub holds: Option<bool>,
    /// The figures behind the verdict.
    pub evidence: String,
    /// Undecided because the trials cannot separate its sides: the runs that would decide it
    /// and the trial count at which the observed difference would be 2 s.e. ([`super::decide`]).
    pub more_trials: Option<MoreTrials>,
}

/// What would decide a claim the trials cannot: these runs at this many trials (s.e.
/// shrinking as 1/√trials, the observed difference taken as the true one).
#[derive(Clone, Debug, PartialEq)]
pub struct MoreTrials {
    /// The rows the claim compares: (run key, learner's label).
    pub rows: Vec<(&'static str, String)>,
    /// The trials each would need.
    pub trials: usize,
}

/// A verdict before it is recorded: holds (or not, or `None`: undecided), the evidence, and
/// what more trials would decide it.
pub(crate) type Judged = (Option<bool>, String, Option<MoreTrials>);

impl Verdict {
    /// One of the project's own targets (issue #13), not a claim of a paper.
    pub fn is_target(&self) -> bool {
        self.source.starts_with(TARGET)
    }

    /// Undecided because both sides of the comparison (or both ends of the trend) are at or
    /// worse than uniform play (its evidence starts with `UNINFORMATIVE`): beating a learner no
    /// better than random is no support, and losing to one is no refutation.
    pub fn uninformative(&self) -> bool {
        self.evidence.starts_with(UNINFORMATIVE)
    }
}

/// The verdicts after a later look: a claim decided at an earlier look keeps that verdict (a
/// group-sequential test stops at its first decisive look, and the later looks' threshold,
/// [`LATER_SE`], is chosen for that rule), and the others take `now`'s. A kept verdict whose
/// claim `now` judges on other figures (a row it compares was given more trials for another
/// claim) says so.
pub(crate) fn keep_decided(earlier: Vec<Verdict>, now: Vec<Verdict>) -> Vec<Verdict> {
    let mut earlier: BTreeMap<(&'static str, String), Verdict> =
        earlier.into_iter().map(|v| ((v.experiment, v.claim.clone()), v)).collect();
    now.into_iter()
        .map(|v| match earlier.remove(&(v.experiment, v.claim.clone())) {
            Some(mut kept) if kept.holds.is_some() => {
                if kept.evidence != v.evidence && !kept.evidence.ends_with(KEPT) {
                    kept.evidence.push_str(KEPT);
                }
                kept
            }
            _ => v,
        })
        .collect()
}

/// How the evidence of a verdict kept from an earlier look ([`keep_decided`]) ends when a row
/// it compares has changed since.
pub(crate) const KEPT: &str = " (decided on these figures at an earlier look, and kept: a row it \
                                compares was given more trials since, for another claim)";

/// The source of every project target: the issue that set them.
pub(crate) const TARGET: &str = "issue #13";

/// How the evidence of an uninformative verdict starts.
pub(crate) const UNINFORMATIVE: &str = "uninformative: ";

/// Mean and standard error of the final regret.
pub(crate) fn stats(r: &AlgorithmResult) -> (f64, f64) {
    mean_se(&r.finals)
}

/// A learner that never left round robin (or plays uniformly): in every trial its final regret
/// is uniform play's expected regret in that trial, to 0.1 %.
pub fn round_robin(r: &AlgorithmResult) -> bool {
    !r.uniform_finals.is_empty()
        && r.uniform_finals.len() == r.finals.len()
        && r.finals.iter().zip(&r.uniform_finals).all(|(f, u)| (f - u).abs() <= 1e-3 * u.abs())
}

/// One value of a claim: a mean with its standard error over `trials`.
#[derive(Clone, Debug)]
pub(crate) struct Point {
    /// The run (key) it is from.
    pub(crate) run: &'static str,
    /// The row's label (empty for a derived value).
    pub(crate) label: String,
    /// Whether the second pass gave the row more trials than its run's first pass: a later
    /// look, judged at [`LATER_SE`].
    pub(crate) raised: bool,
    pub(crate) text: String,
    pub(crate) mean: f64,
    pub(crate) se: f64,
    pub(crate) trials: usize,
    /// The final regret of each trial, in trial order (empty for a derived value): two rows of
    /// one run share trial i's seed (its f, its environment), so their difference is paired.
    pub(crate) finals: Vec<f64>,
    pub(crate) round_robin: bool,
    /// Uniform play's mean final regret over the same trials, and whether this row is at or
    /// worse than it (`None`: no uniform reference, or one without regret).
    pub(crate) uniform: Option<(f64, bool)>,
}

impl Point {
    fn of(run: &'static str, r: &AlgorithmResult) -> Self {
        let (mean, se) = stats(r);
        Self {
            run,
            label: r.label.clone(),
            raised: false,
            text: show(r),
            mean,
            se,
            trials: r.finals.len(),
            finals: r.finals.clone(),
            round_robin: round_robin(r),
            uniform: vs_uniform(r),
        }
    }

    fn no_better_than_uniform(&self) -> bool {
        self.uniform.is_some_and(|(_, no_better)| no_better)
    }
}

/// Uniform play's mean final regret, and whether `r` is at or worse than it: not below it by
/// more than 2 s.e. of the paired difference (trial i against uniform play's expected regret
/// in the same trial i, which has the same f), the flip side of
/// [`AlgorithmResult::worse_than_uniform`]. `None` without a uniform reference with regret.
fn vs_uniform(r: &AlgorithmResult) -> Option<(f64, bool)> {
    let (u, _) = mean_se(&r.uniform_finals);
    if u <= 0.0 {
        return None;
    }
    let (m, se) = r.paired_vs_uniform()?;
    Some((u, m >= -2.0 * se))
}

/// The verdict of a comparison whose sides are all at or worse than uniform play.
fn uninformative(points: &[&Point]) -> Judged {
    let texts: Vec<&str> = points.iter().map(|p| p.text.as_str()).collect();
    let u = points.iter().find_map(|p| p.uniform).map_or(0.0, |(u, _)| u);
    let evidence =
        format!("{UNINFORMATIVE}{} not below uniform play ({u:.0}) by more than 2 s.e.", texts.join(", "));
    (None, evidence, None)
}

/// The standard error s of the difference of `a`'s and `b`'s means. Two rows of one run with
/// the same trials are paired (trial i of each saw the same seed, hence the same f or
/// environment): s is the s.e. of the mean of the per-trial differences, which counts what the
/// rows share. Otherwise s = √(s.e._a² + s.e._b²).
pub(crate) fn spread(a: &Point, b: &Point) -> f64 {
    match paired(&a.finals, &b.finals) {
        Some((_, se)) if a.run == b.run && a.finals.len() > 1 => se,
        _ => (a.se * a.se + b.se * b.se).sqrt(),
    }
}

/// How many s.e. two rows must differ by when one was given more trials by the second pass
/// (a later look at a claim the first pass could not decide). Judging a claim again at 2 s.e.
/// each time it is given more trials decides a claim whose rows do not differ more often than
/// one look does: 8 % of the time with two looks, 12 % with three (one look at 2 s.e.: 4.6 %).
/// At 2.5 s.e. for the later looks it is under 7 % with three looks
/// (`later_looks_keep_the_false_alarm_rate_near_one_looks`).
pub(crate) const LATER_SE: f64 = 2.5;

/// How many s.e. `a` and `b` must differ by: 2, or [`LATER_SE`] when either was raised.
pub(crate) fn threshold(a: &Point, b: &Point) -> f64 {
    if a.raised || b.raised { LATER_SE } else { 2.0 }
}

/// How `a` compares with `b`: `Less` or `Greater` when the means differ by more than 2s
/// ([`spread`]; [`LATER_SE`]·s for a row the second pass raised); `Equal` when the trials
/// cannot separate them.
pub(crate) fn compare(a: &Point, b: &Point) -> std::cmp::Ordering {
    let s2 = threshold(a, b) * spread(a, b);
    if a.mean < b.mean - s2 {
        std::cmp::Ordering::Less
    } else if a.mean > b.mean + s2 {
        std::cmp::Ordering::Greater
    } else {
        std::cmp::Ordering::Equal
    }
}

/// How many s.e. a difference must be for the second pass to aim at it: [`LATER_SE`] (the
/// threshold of a raised row) + 0.84 (the normal's 80th percentile). At n (3.34 s / d)² trials
/// a true difference d is separated by 2.5s four times in five; at n (2.5 s / d)², the count
/// where the observed difference would just be 2.5s, only half the time.
pub(crate) const POWER_SE: f64 = LATER_SE + 0.8416;

/// The trial count at which a true difference equal to the observed one of `a` and `b` would be
/// separated with 80 % chance ([`POWER_SE`], s.e. shrinking as 1/√trials); `None` when they do
/// not differ or have no spread.
fn trials_to_separate(a: &Point, b: &Point) -> Option<f64> {
    let d = (a.mean - b.mean).abs();
    let s = spread(a, b);
    let n = a.trials.min(b.trials);
    (d > 0.0 && s > 0.0).then(|| (n as f64 * (POWER_SE * s / d).powi(2)).ceil())
}

/// Why two points the trials cannot separate leave a claim undecided, with the trial count at
/// which the observed difference would be separated with 80 % chance ([`trials_to_separate`]):
/// the evidence, and the runs and trials that would decide it.
pub(crate) fn inseparable(a: &Point, b: &Point) -> (String, Option<MoreTrials>) {
    let n = a.trials.min(b.trials);
    let need = trials_to_separate(a, b);
    let said = need.map_or(String::new(), |t| {
        format!("; at this difference about {t:.0} trials would separate them (80 % chance)")
    });
    let rows = vec![(a.run, a.label.clone()), (b.run, b.label.clone())];
    let more = need
        .filter(|t| *t > n as f64 && *t <= usize::MAX as f64)
        .map(|t| MoreTrials { rows, trials: t as usize });
    let within = threshold(a, b);
    let looked = if within > 2.0 { " (a later look: the second pass raised a row)" } else { "" };
    (
        format!(
            "within {within} s.e.{looked} at {n} trials: the trials cannot separate {} and {}{said}",
            a.text, b.text
        ),
        more,
    )
}

/// The claim that the value falls along `points` (listed in the order in which the claim says
/// it falls). Holds when the first and the last differ by more than 2s in the claimed
/// direction and no step rises by more than 2s; does not hold when a step (or the whole sweep)
/// goes the other way by more than 2s; otherwise could not decide — the ends equal uniform
/// play exactly (round robin) or the trials cannot separate them.
pub(crate) fn falls(points: &[Point]) -> Judged {
    use std::cmp::Ordering::{Greater, Less};
    let chain = points.iter().map(|p| p.text.as_str()).collect::<Vec<_>>().join(" → ");
    let (Some(first), Some(last)) = (points.first(), points.last()) else {
        return (None, "no rows".to_string(), None);
    };
    if first.round_robin && last.round_robin {
        return (None, format!("round robin: both ends equal uniform play in every trial; {chain}"), None);
    }
    if first.no_better_than_uniform() && last.no_better_than_uniform() {
        return uninformative(&[first, last]);
    }
    if let Some(w) = points.windows(2).find(|w| compare(&w[1], &w[0]) == Greater) {
        return (
            Some(false),
            format!("{chain}; rises from {} to {} by more than 2 s.e.", w[0].text, w[1].text),
            None,
        );
    }
    if compare(last, first) == Less {
        return (Some(true), chain, None);
    }
    let (why, more) = inseparable(first, last);
    (None, format!("{why}; {chain}"), more)
}

pub(crate) fn show(r: &AlgorithmResult) -> String {
    let (m, s) = stats(r);
    format!("{} {m:.0} ± {s:.0}", r.label)
}

pub(crate) type ResultsByName<'a> = BTreeMap<&'static str, &'a [AlgorithmResult]>;

pub(crate) fn find<'a>(by: &ResultsByName<'a>, experiment: &str, label: &str) -> Option<&'a AlgorithmResult> {
    by.get(experiment).and_then(|rs| rs.iter().find(|r| r.label == label))
}

pub(crate) struct Claims<'a> {
    by: ResultsByName<'a>,
    planned: BTreeMap<&'static str, Planned>,
    out: Vec<Verdict>,
}

impl Claims<'_> {
    /// Row `r` of run `run` as a point, raised when it has more trials than the run's first pass.
    fn point(&self, run: &'static str, r: &AlgorithmResult) -> Point {
        let raised = self.planned.get(run).is_some_and(|p| r.finals.len() > p.trials);
        Point { raised, ..Point::of(run, r) }
    }

    fn push(
        &mut self,
        experiment: &'static str,
        claim: String,
        source: &'static str,
        verdict: Option<Judged>,
    ) {
        let (holds, evidence, more_trials) = verdict.unwrap_or((None, "not run".to_string(), None));
        self.out.push(Verdict { experiment, claim, source, holds, evidence, more_trials });
    }

    /// `first` has the lowest regret of `labels` in `experiment`: below each other by more
    /// than 2s. Does not hold when another is below it by more than 2s; could not decide when
    /// `first` never leaves round robin or the trials cannot separate it from the best other.
    fn lowest(&mut self, experiment: &'static str, first: &str, labels: &[&str], source: &'static str) {
        self.ranked(experiment, first, labels, false, source);
    }

    /// `first` is better than or competitive with each other of `labels`: no other is below
    /// it by more than 2s (here a tie is what the claim says); does not hold when one is.
    fn competitive(&mut self, experiment: &'static str, first: &str, labels: &[&str], source: &'static str) {
        self.ranked(experiment, first, labels, true, source);
    }

    /// [`Self::lowest`] (`competitive` false) or [`Self::competitive`]. Either is
    /// uninformative when every other learner is at or worse than uniform play: being below a
    /// learner no better than random supports nothing, and losing to one refutes nothing.
    fn ranked(
        &mut self,
        experiment: &'static str,
        first: &str,
        labels: &[&str],
        competitive: bool,
        source: &'static str,
    ) {
        use std::cmp::Ordering::Less;
        let others: Option<Vec<Point>> = labels
            .iter()
            .filter(|l| **l != first)
            .map(|l| find(&self.by, experiment, l).map(|r| self.point(experiment, r)))
            .collect();
        let a = find(&self.by, experiment, first).map(|r| self.point(experiment, r));
        let verdict = others.zip(a).map(|(others, a)| {
            let best = others.iter().min_by(|x, y| x.mean.total_cmp(&y.mean)).cloned();
            let Some(best) = best else { return (None, "nothing to compare with".to_string(), None) };
            let text = format!("{}; best other: {}", a.text, best.text);
            if a.round_robin {
                let why = format!("round robin: {} equals uniform play in every trial; {text}", a.text);
                return (None, why, None);
            }
            if others.iter().all(Point::no_better_than_uniform) {
                let mut sides: Vec<&Point> = vec![&a];
                sides.extend(&others);
                return uninformative(&sides);
            }
            if others.iter().any(|o| compare(o, &a) == Less) {
                (Some(false), text, None)
            } else if competitive || others.iter().all(|o| compare(&a, o) == Less) {
                (Some(true), text, None)
            } else {
                let (why, more) = inseparable(&a, &best);
                (None, why, more)
            }
        });
        let others: Vec<&str> = labels.iter().copied().filter(|l| *l != first).collect();
        let claim = if competitive {
            format!(
                "{first} is better than or competitive with {} (above none of them by more than 2 s.e.)",
                others.join(", ")
            )
        } else {
            format!("{first} has a lower regret than {}", others.join(", "))
        };
        self.push(experiment, claim, source, verdict);
    }

    /// Each of `labels` has mean ≤ `limit` × uniform play's (a threshold on the means).
    fn below_uniform(&mut self, experiment: &'static str, labels: &[&str], limit: f64, source: &'static str) {
        let rows: Option<Vec<&AlgorithmResult>> =
            labels.iter().map(|l| find(&self.by, experiment, l)).collect();
        let verdict = rows.map(|rows| {
            let ratios: Vec<(String, f64)> =
                rows.iter().map(|r| (r.label.clone(), r.vs_uniform().unwrap_or(f64::NAN))).collect();
            let ok = ratios.iter().all(|(_, x)| *x <= limit);
            (Some(ok), ratios.iter().map(|(l, x)| format!("{l} {x:.2}")).collect::<Vec<_>>().join(", "), None)
        });
        let who = if labels.len() == 1 { labels[0].to_string() } else { "each learner".to_string() };
        self.push(experiment, format!("{who} ≤ {limit}× uniform play"), source, verdict);
    }

    /// No learner of `labels` is behind `baseline` by more than 2s (a non-inferiority target;
    /// could not decide when every row, the baseline's included, is round robin).
    fn not_behind(
        &mut self,
        experiment: &'static str,
        labels: &[&str],
        baseline: &str,
        source: &'static str,
    ) {
        let rows: Option<Vec<Point>> =
            labels.iter().map(|l| find(&self.by, experiment, l).map(|r| self.point(experiment, r))).collect();
        let base = find(&self.by, experiment, baseline).map(|r| self.point(experiment, r));
        let verdict = rows.zip(base).map(|(rows, base)| {
            if base.round_robin && rows.iter().all(|r| r.round_robin) {
                let why = format!("round robin: every row equals uniform play in every trial; {}", base.text);
                return (None, why, None);
            }
            let behind: Vec<&str> = rows
                .iter()
                .filter(|r| compare(r, &base) == std::cmp::Ordering::Greater)
                .map(|r| r.text.as_str())
                .collect();
            if behind.is_empty() {
                (Some(true), format!("{}; every learner within 2 s.e. or below", base.text), None)
            } else {
                (Some(false), format!("{}; behind: {}", base.text, behind.join(", ")), None)
            }
        });
        self.push(experiment, format!("no learner behind {baseline}"), source, verdict);
    }

    /// Regret falls along `steps` (pairs of (run, label), listed in the order in which the
    /// claim says it falls): the rule of [`falls`].
    fn falls(
        &mut self,
        at: &'static str,
        claim: String,
        steps: &[(&'static str, String)],
        source: &'static str,
    ) {
        let rows: Option<Vec<Point>> =
            steps.iter().map(|(e, l)| find(&self.by, e, l).map(|r| self.point(e, r))).collect();
        let verdict = rows.map(|rows| falls(&rows));
        self.push(at, claim, source, verdict);
    }

    /// Seed 002 Thm 4.1's 1/ε: `private`'s excess final regret over `plain` in run `key` at
    /// each ε of `epsilons` (each twice the last) falls by a factor of 2 per doubling, within a
    /// factor √2 (each step's ratio in [√2, 2√2]). A step is decided only where its ratio ± 2
    /// s.e. (delta method) lies wholly inside that band (consistent) or wholly outside it (not);
    /// holds when every step is consistent, does not hold when one is not. The excesses must
    /// be above zero by more than 2 s.e. (of the paired per-trial differences, [`spread`]) to be
    /// divided.
    fn excess_per_doubling(
        &self,
        key: &'static str,
        plain: &str,
        private: &str,
        epsilons: &[f64],
    ) -> Option<Judged> {
        let p = self.point(key, find(&self.by, key, plain)?);
        let excess: Vec<(f64, f64, f64)> = epsilons
            .iter()
            .map(|eps| {
                let q = self.point(key, find(&self.by, key, &format!("{private} eps={eps}"))?);
                Some((*eps, q.mean - p.mean, spread(&q, &p)))
            })
            .collect::<Option<_>>()?;
        let shown: Vec<String> =
            excess.iter().map(|(eps, e, s)| format!("excess {e:.0} ± {s:.0} at ε = {eps}")).collect();
        let shown = shown.join(", ");
        if let Some((eps, e, s)) = excess.iter().find(|(_, e, s)| *e <= 2.0 * s) {
            return Some((
                None,
                format!("{shown}; the excess at ε = {eps} ({e:.0} ± {s:.0}) is not above zero by 2 s.e."),
                None,
            ));
        }
        let (low, high) = (std::f64::consts::SQRT_2, 2.0 * std::f64::consts::SQRT_2);
        let steps: Vec<(f64, f64)> = excess
            .windows(2)
            .map(|w| {
                let r = w[0].1 / w[1].1;
                (r, r * ((w[0].2 / w[0].1).powi(2) + (w[1].2 / w[1].1).powi(2)).sqrt())
            })
            .collect();
        let ratios: Vec<String> = steps.iter().map(|(r, s)| format!("{r:.2} ± {s:.2}")).collect();
        let text = format!("{shown}; ratio per doubling {} (band {low:.2}–{high:.2})", ratios.join(", "));
        let outside = steps.iter().any(|(r, s)| r + 2.0 * s < low || r - 2.0 * s > high);
        let inside = steps.iter().all(|(r, s)| r - 2.0 * s >= low && r + 2.0 * s <= high);
        Some(match (outside, inside) {
            (true, _) => (Some(false), text, None),
            (false, true) => (Some(true), text, None),
            (false, false) => (None, format!("{text}; a ratio's ± 2 s.e. straddles the band's edge"), None),
        })
    }

    /// The relative privacy cost (private / plain − 1, final regret) in each run of `sweep`
    /// that ran, with its s.e. by the delta method; `None` unless two runs did.
    fn privacy_cost(
        &self,
        sweep: &[(&'static str, usize)],
        plain: &str,
        private: &str,
    ) -> Option<Vec<Point>> {
        let points: Vec<Point> = sweep
            .iter()
            .filter_map(|(key, _)| {
                let (p, q) = (find(&self.by, key, plain)?, find(&self.by, key, private)?);
                let ((mp, sp), (mq, sq)) = (stats(p), stats(q));
                let ratio = mq / mp.abs().max(1e-12);
                let se = ratio.abs()
                    * ((sq / mq.abs().max(1e-12)).powi(2) + (sp / mp.abs().max(1e-12)).powi(2)).sqrt();
                let horizon = self.planned.get(key).map_or(0, |p| p.horizon);
                Some(Point {
                    run: key,
                    label: String::new(),
                    raised: false,
                    text: format!("{:.2} ± {se:.2} at T = {horizon}", ratio - 1.0),
                    mean: ratio - 1.0,
                    se,
                    trials: p.finals.len().min(q.finals.len()),
                    finals: Vec::new(),
                    round_robin: false,
                    uniform: None,
                })
            })
            .collect();
        (points.len() >= 2).then_some(points)
    }
}

/// The sources of the papers' claims, each with the sentence it is in (seed 002 has no
/// experiments: its claims are read off its theorems).
const ZHOU_TAN_FIG2: &str = "seed 000 §5, Fig. 2: \"MoMA-GP-UCB (or LDP-MoMA-GP-UCB) tends to empirically \
                             outperform the other two algorithms in both non-private and private settings\"";
const ZHOU_TAN_FIG3: &str = "seed 000 App. E, Fig. 3: \"LDP-MoMA-GP-UCB has better or competitive performance \
                             across different scenarios\"";
const ZHOU_TAN_EPS: &str = "seed 000 Thm 1–3 (regret bounds grow as ε falls; derived from theorems)";
const TAO_RSE_BEST: &str =
    "seed 004 §6, Fig. 1, 3, 4: \"DPRSE always outperform DPRUCB among these three settings\"";
const TAO_EPS: &str = "seed 004 §6: \"when ε decreases, the regret will increase\"";
const TAO_V_CLAIM: &str = "seed 004 §6: \"when the term v becomes larger, we have smaller regret\"";
const TAO_LDP_TRENDS: &str = "seed 004 §6, Fig. 2: \"when ε or v is larger, we have smaller regret\"";
const TAO_LDP_ABOVE: &str =
    "seed 004 §6: \"compared with the central DP model, we can see the regret is larger in the LDP model\"";
const AGARWAL_FREE: &str = "seed 002 abstract, Cor. 3.2: \"ε-differential privacy may be ensured for free\" \
                            (derived from theorems: the paper has no experiments)";
const AGARWAL_BANDIT: &str =
    "seed 002 Thm 4.1: regret O(√(NT log T log N)/ε) (derived from theorems: the paper has no experiments)";

pub(crate) const ZHOU_TAN_LDP: [&str; 6] = ["fig2a", "fig2b", "fig2c", "fig3a", "fig3b", "fig3c"];
pub(crate) const ZHOU_TAN_RAW: [&str; 3] = ["fig2d", "fig2e", "fig2f"];
pub(crate) const DATA_TABLES: [&str; 6] = ["fig2b", "fig2c", "fig2e", "fig2f", "fig3b", "fig3c"];
pub(crate) const LDP_LEARNERS: [&str; 3] = ["LDP-TGP-UCB", "LDP-ATA-GP-UCB", "LDP-MoMA-GP-UCB"];
pub(crate) const RAW_LEARNERS: [&str; 3] = ["TGP-UCB", "ATA-GP-UCB", "MoMA-GP-UCB"];

pub(crate) fn calibrated_key(figure: &str) -> &'static str {
    ZHOU_TAN_CALIBRATED.iter().find(|(f, _)| *f == figure).map_or("", |(_, k)| k)
}

/// The claims of the four seeds (SPEC §2.4), as the papers state them, and issue #13's targets,
/// with verdicts.
pub fn claims(outcomes: &[Outcome]) -> Vec<Verdict> {
    let by: ResultsByName = outcomes
        .iter()
        .filter_map(|o| o.results.as_ref().ok().map(|r| (o.planned.key, r.as_slice())))
        .collect();
    let planned = outcomes.iter().map(|o| (o.planned.key, o.planned)).collect();
    let mut c = Claims { by, planned, out: Vec::new() };
    // Seed 000 §5 (Fig. 2) and Appendix E (Fig. 3), in its words.
    for e in ZHOU_TAN_LDP {
        if e.starts_with("fig3") {
            c.competitive(e, "LDP-MoMA-GP-UCB", &LDP_LEARNERS, ZHOU_TAN_FIG3);
        } else {
            c.lowest(e, "LDP-MoMA-GP-UCB", &LDP_LEARNERS, ZHOU_TAN_FIG2);
        }
    }
    for e in ZHOU_TAN_RAW {
        c.lowest(e, "MoMA-GP-UCB", &RAW_LEARNERS, ZHOU_TAN_FIG2);
    }
    // ε: light sensor at 0.5 (fig2b) and 1 (fig3b); stocks at 0.5 (fig3c) and 1 (fig2c).
    for (at, small, large) in [("fig3b", "fig2b", "fig3b"), ("fig3c", "fig3c", "fig2c")] {
        for l in LDP_LEARNERS {
            let steps = [(small, l.to_string()), (large, l.to_string())];
            c.falls(
                at,
                format!("{l}: regret at ε = 0.5 ({small}) above regret at ε = 1 ({large})"),
                &steps,
                ZHOU_TAN_EPS,
            );
        }
    }
    c.below_uniform(calibrated_key("fig2a"), &LDP_LEARNERS, 0.6, "issue #13 target (T = 1000)");
    c.below_uniform(calibrated_key("fig2a"), &["GP-UCB"], 0.3, "issue #13 target (T = 1000)");
    c.below_uniform(FIG2A_LONG, &LDP_LEARNERS, 0.25, "issue #13 target (T = 10⁴)");
    for e in ZHOU_TAN_RAW {
        let mut learners = vec!["GP-UCB"];
        learners.extend(RAW_LEARNERS);
        c.below_uniform(calibrated_key(e), &learners, 0.6, "issue #13 target");
    }
    for e in DATA_TABLES {
        let learners: Vec<&str> = if ZHOU_TAN_RAW.contains(&e) {
            ["GP-UCB"].into_iter().chain(RAW_LEARNERS).collect()
        } else {
            ["GP-UCB"].into_iter().chain(LDP_LEARNERS).collect()
        };
        c.not_behind(calibrated_key(e), &learners, "UCB1", "issue #13 target");
    }
    // Seed 004 §6, in its words.
    for e in ["tao-s1", "tao-s2", "tao-s3"] {
        for v in TAO_V {
            for eps in TAO_CENTRAL_EPSILONS {
                let (se, ucb) = (format!("DP-RSE v={v} eps={eps}"), format!("DP-RUCB v={v} eps={eps}"));
                c.lowest(e, &se, &[&se, &ucb], TAO_RSE_BEST);
            }
            for alg in ["DP-RSE", "DP-RUCB"] {
                let steps: Vec<(&str, String)> =
                    TAO_CENTRAL_EPSILONS.iter().map(|eps| (e, format!("{alg} v={v} eps={eps}"))).collect();
                c.falls(e, format!("{alg} v={v}: regret falls as ε grows"), &steps, TAO_EPS);
            }
        }
        for alg in ["DP-RSE", "DP-RUCB"] {
            for eps in TAO_CENTRAL_EPSILONS {
                let steps: Vec<(&str, String)> =
                    TAO_V.iter().map(|v| (e, format!("{alg} v={v} eps={eps}"))).collect();
                c.falls(e, format!("{alg} eps={eps}: regret falls as v grows"), &steps, TAO_V_CLAIM);
            }
        }
    }
    for v in TAO_V {
        let steps: Vec<(&str, String)> =
            TAO_LOCAL_EPSILONS.iter().map(|eps| ("tao-ldp", format!("LDP-RSE v={v} eps={eps}"))).collect();
        c.falls("tao-ldp", format!("LDP-RSE v={v}: regret falls as ε grows"), &steps, TAO_LDP_TRENDS);
        // The paper's pair (LDP at its smallest ε against DP at its largest), then the strict
        // one: LDP at its largest ε = 20 against central DP at its smallest ε = 0.5.
        for (local, central) in [("5", "1"), ("20", "0.5")] {
            let steps = [
                ("tao-ldp", format!("LDP-RSE v={v} eps={local}")),
                ("tao-s3", format!("DP-RSE v={v} eps={central}")),
            ];
            c.falls(
                "tao-ldp",
                format!("LDP regret (ε = {local}) above central DP regret (ε = {central}) on S3, v = {v}"),
                &steps,
                TAO_LDP_ABOVE,
            );
        }
    }
    for eps in TAO_LOCAL_EPSILONS {
        let steps: Vec<(&str, String)> =
            TAO_V.iter().map(|v| ("tao-ldp", format!("LDP-RSE v={v} eps={eps}"))).collect();
        c.falls("tao-ldp", format!("LDP-RSE eps={eps}: regret falls as v grows"), &steps, TAO_LDP_TRENDS);
    }
    // Seed 002: the experts' regret is O(√(T ln N)) + Õ(N ln N / ε), "privacy for free" (§1.1,
    // Cor. 3.2): the relative cost falls as T grows. The bandit's (Thm 4.1) is
    // O(√(NT ln T ln N) / ε) against EXP3's O(√(NT ln N)): the relative cost grows with T.
    for eps in AGARWAL_EXPERTS_EPSILONS {
        let private = format!("Private-Hedge eps={eps}");
        let verdict = c.privacy_cost(&EXPERTS_T[1..], "Hedge", &private).map_or_else(
            || (None, "needs a run at each of T = 5·10⁴ and 5·10⁵ (the full run)".to_string(), None),
            |points| falls(&points),
        );
        c.push(
            "agarwal-experts",
            format!("{private}: the privacy cost relative to Hedge (private/plain − 1) falls as T grows"),
            AGARWAL_FREE,
            Some(verdict),
        );
    }
    for eps in AGARWAL_BANDIT_EPSILONS {
        let private = format!("Private-EXP3 eps={eps}");
        let verdict = c.privacy_cost(&BANDIT_T, "EXP3", &private).map(|mut points| {
            points.reverse();
            falls(&points)
        });
        c.push(
            "agarwal-bandit",
            format!(
                "{private}: the privacy cost relative to EXP3 (private/plain − 1) grows with T (√ln T / ε)"
            ),
            AGARWAL_BANDIT,
            verdict,
        );
    }
    for (key, _) in BANDIT_T {
        let verdict = c.excess_per_doubling(key, "EXP3", "Private-EXP3", &AGARWAL_BANDIT_EPSILONS);
        c.push(
            key,
            "Private-EXP3's excess regret over EXP3 halves per doubling of ε (∝ 1/ε; each step's ratio within √2 of 2)"
                .to_string(),
            AGARWAL_BANDIT,
            verdict,
        );
    }
    // Seed 003, Table 1: every cell within 2× of the paper's (at the paper's T and trials), and
    // "a consistent increase in regret as the privacy budget (α) is reduced" (§6.2) judged at
    // each step: non-private → α = 10 → α = 1 → α = 0.1.
    let table1 = c.planned.get("dubey-table1").map(|p| (p.trials, p.horizon));
    let rows: Vec<String> = ["non-private".to_string()]
        .into_iter()
        .chain(TABLE1_ALPHAS.iter().map(|a| format!("JDP alpha={a}")))
        .collect();
    for (i, kind) in TABLE1_BENCHMARKS.iter().enumerate() {
        for (row, name) in rows.iter().enumerate() {
            let label = format!("{} {name}", kind.name());
            let paper = PAPER_TABLE1[row][i];
            let verdict = find(&c.by, "dubey-table1", &label).map(|r| {
                let ratio = stats(r).0 / paper;
                let text = format!("{}; paper {paper:.0}; ratio {ratio:.2}", show(r));
                match table1 {
                    Some(at) if at == TABLE1_PAPER => (Some((0.5..=2.0).contains(&ratio)), text, None),
                    _ => (
                        None,
                        format!(
                            "not checked at this horizon: the paper's figure is at T = {}, {} trials (the full run); {text}",
                            TABLE1_PAPER.1, TABLE1_PAPER.0
                        ),
                        None,
                    ),
                }
            });
            c.push("dubey-table1", format!("{label} within 2× of the paper's"), "seed 003 Table 1", verdict);
        }
        for pair in rows.windows(2) {
            let (more, less) = (&pair[0], &pair[1]);
            let steps = [
                ("dubey-table1", format!("{} {less}", kind.name())),
                ("dubey-table1", format!("{} {more}", kind.name())),
            ];
            c.falls(
                "dubey-table1",
                format!("{}: regret rises from {more} to {less} (α falls)", kind.name()),
                &steps,
                "seed 003 §6.2, Table 1",
            );
        }
    }
    let mut steps: Vec<(&str, String)> =
        ALPHAS.iter().map(|a| ("dubey-alpha", format!("JDP alpha={a}"))).collect();
    steps.push(("dubey-alpha", "non-private".to_string()));
    c.falls(
        "dubey-alpha",
        "regret falls as α grows, non-private lowest".to_string(),
        &steps,
        "seed 003 Fig. 1",
    );
    let steps: Vec<(&str, String)> = BETAS.iter().map(|b| ("dubey-beta", format!("JDP beta={b}"))).collect();
    c.falls("dubey-beta", "regret falls as β grows".to_string(), &steps, "seed 003 Fig. 2");
    for a in LOCAL_ALPHAS {
        let steps =
            [("dubey-local", format!("local-JDP alpha={a}")), ("dubey-local", format!("JDP alpha={a}"))];
        c.falls(
            "dubey-local",
            format!("local JDP regret above JDP regret at α = {a}"),
            &steps,
            "seed 003 Remark 7",
        );
    }
    c.out
}
