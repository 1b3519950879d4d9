//! Why a claim does not hold (or cannot be decided): the diagnoses, keyed by run and claim.

use super::claims::Verdict;
use super::{FIG2A_LONG, TAO_PAPER};

/// What a "does not hold" (or an undecided) verdict comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    /// A bug, fixed in the named commit.
    Bug(&'static str),
    /// A constant of the recipe the run used.
    Constant,
    /// The horizon: a longer run decides (the diagnosis says which).
    Horizon,
    /// What the learner observes does not identify the answer at this horizon.
    InformationLimit,
    /// The paper's claim does not follow from its algorithm with its stated constants.
    PaperConstants,
}

impl Cause {
    pub(crate) fn words(self) -> String {
        match self {
            Self::Bug(commit) => format!("a bug (fixed in {commit})"),
            Self::Constant => "a constant".to_string(),
            Self::Horizon => "the horizon".to_string(),
            Self::InformationLimit => "an information limit".to_string(),
            Self::PaperConstants => "not reproducible with the paper's stated constants".to_string(),
        }
    }
}

/// The diagnosis of a claim's verdict: why it does not hold (or cannot be decided), and the
/// runs of the report that show it.
#[derive(Clone, Copy, Debug)]
pub struct Diagnosis {
    /// The runs the claims are about: their keys start with this.
    pub experiment: &'static str,
    /// The claims' texts contain each of these.
    pub claim: &'static [&'static str],
    /// The cause.
    pub cause: Cause,
    /// The diagnosis, in words.
    pub text: &'static str,
    /// The runs (keys of the plan) whose sections show it.
    pub runs: &'static [&'static str],
}

/// The diagnoses, keyed by run and claim (the report is regenerated from them, never edited).
/// Figures quoted here were measured with this code at seed 0; the runs named show them.
pub static DIAGNOSES: &[Diagnosis] = &[
    Diagnosis {
        experiment: "tao-s",
        claim: &["DP-RSE v=", "has a lower regret than DP-RUCB"],
        cause: Cause::PaperConstants,
        text: "With the constants seed 004 states (Alg. 3: 24^{(1+v)/v} in R_τ; tao-s1-paper) DP-RSE is \
               round robin at T = 10⁵: its first epoch alone is longer than T. R_τ grows as κ^{(1+v)/v}, \
               so against the practical κ = 2, whose first epoch is already 145,325 pulls at v = 0.5, \
               ε = 1 (docs/constants.md), the paper's κ = 24 needs 12³ ≈ 1728× more, ≈ 2.5·10⁸ pulls: \
               no feasible T decides the claim with the paper's constants. With the calibrated K-armed \
               rule DP-RSE leaves round robin (0.37–0.95× uniform play at T = 10⁵) but stays above \
               DP-RUCB (0.13–0.29×): elimination pulls every surviving arm equally, and the one κ \
               with a union over rounds that serves the UCB learners costs elimination most \
               (docs/constants.md, 'Where the rule falls short'). At T = 10⁶ (the full run, 90 trials, \
               measured) DP-RSE is below DP-RUCB at v = 0.9 on S1 (ε = 1: 28,540 ± 628 against \
               51,459 ± 9,286) and S2 (ε = 0.5: 23,578 ± 652 against 61,129 ± 12,697), still above it \
               at v = 0.5 on S1–S3 (S1, ε = 1: 177,203 ± 2,673 against 37,977 ± 8,042) and at v = 0.9 \
               on S3 (ε = 1: 46,191 ± 607 against 20,072 ± 2,314): with the calibrated constants \
               DP-RUCB's regret is 0.07–0.19× uniform play, where the paper's figures show it above \
               DP-RSE.",
        runs: &["tao-s1", "tao-s2", "tao-s3", TAO_PAPER],
    },
    Diagnosis {
        experiment: "fig3c",
        claim: &["LDP-MoMA-GP-UCB has a lower regret"],
        cause: Cause::Constant,
        text: "Under seed 000's recipe (practical constants; on the tables its prior, the empirical \
               covariance K̂ with prior mean 0) every learner on the data tables ends at 0.98–1.30× \
               uniform play (light sensor: 1.26–1.30×): each report of the arm just played lifts its \
               index above the unplayed arms' and the learner stays there (docs/constants.md, 'The \
               prior of a data table'), so which learner is lowest is decided by where each locks in, \
               not by its algorithm. With the calibrated constants and the independent prior \
               (<figure>-calibrated) no table figure locks in, and LDP-MoMA-GP-UCB is not lowest \
               either: it keeps the least-squares fit of one row of its k × epoch table (Alg. 3), 1/k \
               of its data, and decides once per k pulls; our regret counts each of those k pulls, as \
               seed 000 defines T (N epochs of k iterations).",
        runs: &["fig3c", "fig3c-calibrated", "fig2c-calibrated"],
    },
    Diagnosis {
        experiment: "fig2a-calibrated",
        claim: &["each learner ≤ 0.6× uniform play"],
        cause: Cause::Constant,
        text: "LDP-MoMA-GP-UCB alone misses it: its k (13 at T = 1000) costs it 1/k of its data and a \
               decision once per k pulls, each pull counted (seed 000's T); the other LDP learners \
               are at 0.39–0.48×.",
        runs: &["fig2a-calibrated", FIG2A_LONG],
    },
    Diagnosis {
        experiment: "fig2a-T10000",
        claim: &["each learner ≤ 0.25× uniform play"],
        cause: Cause::Constant,
        text: "LDP-MoMA-GP-UCB's k (15 at T = 10⁴): 1/k of its data, one decision per k pulls, each \
               pull counted.",
        runs: &[FIG2A_LONG],
    },
    Diagnosis {
        experiment: "fig2a-calibrated",
        claim: &["GP-UCB ≤ 0.3× uniform play"],
        cause: Cause::Constant,
        text: "The calibrated κ = 0.3 was chosen once on settings no figure reports (docs/constants.md) \
               and not tuned on this one; GP-UCB ends at 0.47× here with a s.e. of 0.12× over 10 \
               trials (a new f per trial), so the target is not met at this κ.",
        runs: &["fig2a-calibrated"],
    },
    Diagnosis {
        experiment: "fig2",
        claim: &["each learner ≤ 0.6× uniform play"],
        cause: Cause::Constant,
        text: "MoMA-GP-UCB's k (⌈ln(4eT/δ)⌉, odd: 13 at T = 1000, 15 at T = 10⁴): Alg. 3 keeps the \
               least-squares fit of one row of its k × epoch table, 1/k of its data, and decides once \
               per k pulls; regret counts each of the k pulls of an epoch (seed 000: T iterations in N \
               epochs of k). Counted once per epoch its regret would be 1/k of ours. The other \
               learners meet the target.",
        runs: &["fig2e-calibrated"],
    },
    Diagnosis {
        experiment: "fig2",
        claim: &["no learner behind UCB1"],
        cause: Cause::Constant,
        text: "MoMA-GP-UCB is the learner behind UCB1 (its k: 1/k of its data, one decision per k \
               pulls, each pull counted); GP-UCB, TGP-UCB and ATA-GP-UCB are level with or below it.",
        runs: &["fig2e-calibrated", "fig2f-calibrated"],
    },
    Diagnosis {
        experiment: "dubey-table1",
        claim: &["regret falls as α grows"],
        cause: Cause::Horizon,
        text: "Table 1 is at T = 10⁴ with 10 trials (the full run); the quick run has T = 2000 and 3 \
               trials, where the private rows on styb and mw are near uniform play and the trials \
               cannot separate them. Seed 003 states neither Table 1's reward noise (ours: Gaussian, \
               sd 0.1 on the normalised scale) nor its QFF order (ours: dubey::run), and its width \
               uses B = 1 (§6) where the functions' norms in our feature spaces are 4–10: all three \
               set how soon a private learner leaves uniform play. The issue measured at T = 10⁴ \
               that mw's regret does grow as α shrinks.",
        runs: &["dubey-table1"],
    },
    Diagnosis {
        experiment: "dubey-table1",
        claim: &["JDP alpha=", "within 2× of the paper's"],
        cause: Cause::PaperConstants,
        text: "The gap is there before any privacy: at the paper's T = 10⁴ and 10 trials (the full \
               run) our non-private learner ends at 4,714 ± 770 on styb and 7,711 ± 620 on mw, 5.3× and \
               8.6× the paper's 885 and 901 (camel: 369 ± 236 against 519), so no private row of those \
               two can be within 2× of the paper's. Seed 003 states Table 1's setting only as 'functions \
               from Mutny & Krause (2018)': not the domain or its discretisation, the functions' scale, \
               the reward noise (ours: Gaussian, sd 0.1 on the normalised scale) or the QFF order (ours: \
               dubey::run). Measured against our own non-private row, privacy costs no more than the \
               paper says: α = 10 is level with it (styb 4,234 ± 717, mw 6,880 ± 938; the paper: 1.88× \
               and 1.73× its non-private row), α = 1 is 1.67× and 1.83× (the paper: 3.03× and 3.20×).",
        runs: &["dubey-table1"],
    },
    Diagnosis {
        experiment: "agarwal-experts",
        claim: &["the privacy cost relative to Hedge"],
        cause: Cause::Horizon,
        text: "The claim is about large T (regret O(√(T ln N)) + Õ(N ln N/ε)). At T = 5000 every \
               Private-Hedge is at 0.75–0.98× uniform play, which caps it, so its ratio to Hedge there \
               measures the cap; the claim is judged from T = 5·10⁴ to 5·10⁵, which only the full run \
               has (the issue's measurement at ε = 1: 9.37 at 5·10⁴, 3.68 at 5·10⁵).",
        runs: &["agarwal-experts", "agarwal-experts-T50000"],
    },
];

/// The diagnosis of `v`, if there is one.
pub fn diagnosis(v: &Verdict) -> Option<&'static Diagnosis> {
    DIAGNOSES
        .iter()
        .find(|d| v.experiment.starts_with(d.experiment) && d.claim.iter().all(|c| v.claim.contains(c)))
}
