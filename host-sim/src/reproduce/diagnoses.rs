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
    /// The trial count: more trials decide (the diagnosis says how many).
    Trials,
    /// What the learner observes does not identify the answer at this horizon.
    InformationLimit,
    /// The paper's claim does not follow from its algorithm with its stated constants.
    PaperConstants,
    /// Our constants and our horizon, neither of which the paper states: with other constants
    /// or a longer run the claim holds (the diagnosis says which).
    OurConstantsAndHorizon,
}

impl Cause {
    pub(crate) fn words(self) -> String {
        match self {
            Self::Bug(commit) => format!("a bug (fixed in {commit})"),
            Self::Constant => "a constant".to_string(),
            Self::Horizon => "the horizon".to_string(),
            Self::Trials => "the trial count".to_string(),
            Self::InformationLimit => "an information limit".to_string(),
            Self::PaperConstants => "not reproducible with the paper's stated constants".to_string(),
            Self::OurConstantsAndHorizon => {
                "our constants and the horizon (the paper states neither)".to_string()
            }
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
        cause: Cause::OurConstantsAndHorizon,
        text: "Seed 004 states no horizon for §6 and no constants for its figures beyond Alg. 1–3's, so \
               this verdict is about our constants and our T, not about the paper. With our calibrated \
               K-armed rule at T = 10⁵ (this run) DP-RSE leaves round robin (0.37–0.95× uniform play) \
               but stays above DP-RUCB (0.13–0.29×): elimination pulls every surviving arm equally, and \
               the one κ with a union over rounds that serves the UCB learners costs elimination most \
               (docs/constants.md, 'Where the rule falls short'). With the practical constants at \
               T = 10⁵ (docs/constants.md's tao table, 90 trials, ε = 1) the claim holds at v = 0.9 on \
               S1–S3: DP-RSE at 0.20 / 0.15 / 0.27× uniform play against DP-RUCB's 0.57 / 0.45 / \
               0.49×; at v = 0.5 DP-RSE is round robin there. With the calibrated constants at T = 10⁶ \
               (the full run, 90 trials) DP-RSE is below DP-RUCB at v = 0.9 on S1 (ε = 1: 28,540 ± 628 \
               against 51,459 ± 9,286) and S2 (ε = 0.5: 23,578 ± 652 against 61,129 ± 12,697), still \
               above it at v = 0.5 on S1–S3 (S1, ε = 1: 177,203 ± 2,673 against 37,977 ± 8,042) and at \
               v = 0.9 on S3 (ε = 1: 46,191 ± 607 against 20,072 ± 2,314). DP-RUCB's large s.e. comes \
               from trials that lock onto a wrong arm: its median (in the run's table) is well below its \
               mean. With the constants seed 004 states (Alg. 3: 24^{(1+v)/v} in R_τ; tao-s1-paper) \
               DP-RSE is round robin at T = 10⁵: its first epoch alone (≈ 2.5·10⁸ pulls at v = 0.5, \
               ε = 1) is longer than any feasible T.",
        runs: &["tao-s1", "tao-s2", "tao-s3", TAO_PAPER],
    },
    Diagnosis {
        experiment: "fig3c",
        claim: &["LDP-MoMA-GP-UCB is better than or competitive"],
        cause: Cause::Constant,
        text: "Under seed 000's recipe (practical constants; on the tables its prior, the empirical \
               covariance K̂ with prior mean 0) every learner on the data tables ends at 0.98–1.30× \
               uniform play (light sensor: 1.26–1.30×): each report of the arm just played lifts its \
               index above the unplayed arms' and the learner stays there (docs/constants.md, 'The \
               prior of a data table'), so which learner is best is decided by where each locks in, \
               not by its algorithm; with every learner at or worse than uniform play the comparison \
               is uninformative. With the calibrated constants and the independent prior \
               (<figure>-calibrated) no table figure locks in; there LDP-MoMA-GP-UCB is the highest of \
               the LDP learners on the stocks (0.96× uniform play against 0.83–0.91×): it keeps the \
               least-squares fit of one row of its k × epoch table (Alg. 3), 1/k of its data, and \
               decides once per k pulls; our regret counts each of those k pulls, as seed 000 defines \
               T (N epochs of k iterations).",
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
        experiment: "tao-s",
        claim: &["DP-RUCB eps=", "regret falls as v grows"],
        cause: Cause::Trials,
        text: "DP-RUCB's mean regret at T = 10⁶ is set by the share of trials that lock onto a wrong \
               arm for most of the run (final regret above 10⁵; on S1 the second arm, Δ = 0.2, costs \
               2·10⁵). On S1 and S2, whose gaps are 0.2 and more, that share hardly moves with v (S1, \
               1,543 trials of this seed: 26 % at v = 0.5 against 24 % at v = 0.9 for ε = 0.5, 18 % \
               against 16 % for ε = 1; S2, 605 trials: 18 % against 17 %, 11 % against 10 %), nor do \
               the trials that do not lock (medians: S1 7,777 → 7,011 and 4,510 → 4,119; S2 6,446 → \
               6,001 and 3,705 → 3,814), so the means move by 8–12 %. Where the second pass raised the \
               two rows far enough the claim holds: S1 at ε = 1, 43,353 ± 1,105 → 36,827 ± 1,027 at \
               5,599 trials. S2 at ε = 1 is 39,432 ± 2,274 → 36,470 ± 2,241 at 2,015 trials and names \
               22,527; S1 at ε = 0.5, whose means at 90 and 269 trials go the other way (68,754 → \
               71,196), names 27,714; S2 at ε = 0.5 names 1,159 at 90 trials: more than the budget \
               left them. Where a gap is small the claim holds \
               at the first pass's trials: on S3 (smallest gap 0.05) the share that locks falls from \
               9 % to 6 % (ε = 0.5) and from 6 % to 2 % (ε = 1), and the medians from 21,563 to 8,212 \
               and from 7,803 to 5,124 (683 trials of this seed).",
        runs: &["tao-s1", "tao-s2", "tao-s3"],
    },
    Diagnosis {
        experiment: "fig2a",
        claim: &["LDP-MoMA-GP-UCB has a lower regret than"],
        cause: Cause::Constant,
        text: "LDP-MoMA-GP-UCB is below LDP-ATA-GP-UCB but above LDP-TGP-UCB, on each trial's own f: \
               565 against 555 at the 115 trials the second pass gave the two rows (paired, \
               correlation 0.98), and by 8.3 ± 1.2 at 1,056 trials of the same seed. MoMA's k (13 at T = 1000) costs it \
               1/k of its data and a decision once per k pulls, each pull counted (seed 000's T: N \
               epochs of k iterations): Alg. 3's epochs, whose price the calibrated run shows too (there \
               it alone misses ≤ 0.6× uniform play).",
        runs: &["fig2a", "fig2a-calibrated"],
    },
    Diagnosis {
        experiment: "fig2d",
        claim: &["MoMA-GP-UCB has a lower regret than"],
        cause: Cause::Constant,
        text: "With seed 000's recipe (the practical constants) MoMA-GP-UCB is level with TGP-UCB, and \
               the second pass's 27,109 trials separate a difference of 0.2 % the wrong way: 450.2 \
               against 449.2, paired on each trial's f (both below ATA-GP-UCB, 571). With the \
               calibrated constants it is behind the other two (fig2d-calibrated: 122.9 against \
               TGP-UCB's 72.0 and ATA-GP-UCB's 76.7, 10 trials). As on fig2a, MoMA's k costs it 1/k of \
               its data and a decision once per k pulls, each pull counted (seed 000's T: N epochs of \
               k iterations): Alg. 3's epochs.",
        runs: &["fig2d", "fig2d-calibrated"],
    },
    Diagnosis {
        experiment: "dubey-table1",
        claim: &["regret rises from", "(α falls)"],
        cause: Cause::Trials,
        text: "Each step of α (non-private → 10 → 1 → 0.1) is judged on its own. At the paper's T = 10⁴ \
               and 10 trials (seed 0) every step goes the paper's way in the means (camel 369 → 771 → \
               1,537 → 3,285; styb 4,131 → 4,471 → 7,009 → 9,036; mw 7,221 → 7,967 → 12,827 → 14,879) \
               and the later steps are decided (mw's last is uninformative: both ends at uniform play). \
               The first, non-private → α = 10, is within the first pass's noise on all three: camel's \
               non-private mean is lifted by trials that lock onto a wrong candidate (median 103 against \
               α = 10's 644, mean 369 ± 236); styb's and mw's steps are 8% and 10% of the means, with \
               s.e. of 16% and 12%, and pairing the trials does not help: each row's private noise \
               leaves them uncorrelated (−0.14, 0.26, −0.31). The second pass raised camel's two \
               rows to 141 trials (10 s of one core a trial for both), where the step holds: 513 ± 79 \
               against 821 ± 35. Styb's and mw's steps \
               name about 738 and 331 trials; their two rows cost 131 s and 170 s of one core a trial, \
               so 26 and 15 hours, beyond the budget. The quick run (T = 2000, 3 \
               trials) is further from deciding.",
        runs: &["dubey-table1"],
    },
    Diagnosis {
        experiment: "dubey-table1",
        claim: &["camel non-private", "within 2× of the paper's"],
        cause: Cause::Constant,
        text: "Our camel is easier than the paper's: at T = 10⁴ (2 trials, seed 0) the non-private \
               QFF learner ends at 127 ± 34, 0.24× the paper's 519, and GP-UCB on the exact kernel at \
               25 ± 8; UCB1 ends at 590 ± 3, level with the paper's figure. The noise (Gaussian, sd 0.1 \
               of the normalised range), the scaling and the 25 × 25 grid are ours (Table 1 states none \
               of them); with this noise every candidate is told apart within a few pulls.",
        runs: &["dubey-table1"],
    },
    Diagnosis {
        experiment: "dubey-table1",
        claim: &["styb ", "within 2× of the paper's"],
        cause: Cause::Constant,
        text: "The dimension we read: Table 1 names \"Stybtang-20\", but Dubey §6 says \"We conduct \
               experiments with input dimensionality d = 2\". Read in 2-D, the same learner, kernel, \
               QFF nodes, B, λ and width reproduce all four of the paper's styb cells \
               (dubey-table1-2d, T = 10⁴, the paper's 10 trials, seed 0: 857 ± 321, 1,645 ± 137, \
               2,965 ± 233 and 4,164 ± 134 against 885, 1,667, 2,680 and 4,493: 0.93–1.11×), where \
               the 20-D reading is 1.7–3.3× (2 trials, T = 10⁴; in 20-D B = 1 against the function's \
               norms of 7–11 leaves trials locked onto wrong candidates, docs/table1.md). The \
               paper's styb was most likely 2-D. Michalewicz is not reproduced in either reading \
               (mw2: 3.5–4.8× the paper's).",
        runs: &["dubey-table1", "dubey-table1-2d"],
    },
    Diagnosis {
        experiment: "dubey-table1",
        claim: &["non-private within 2× of the paper's"],
        cause: Cause::Constant,
        text: "Two causes, each shown by runs (docs/table1.md). (1) The QFF order, fixed in issue #38: \
               with 6 and 12 nodes per coordinate (Remark 2 asks for more than 11.1 and 25 at l = 0.3 \
               and 0.2) the features missed the kernel by 0.2 and 0.1 and the learner had linear \
               regret (styb 4,714 ± 770 at T = 10⁴, 10 trials); with Remark 2's 12 and 26 nodes (errors \
               1.9·10⁻⁴, 2.4·10⁻⁸) styb at T = 2000 falls from 1,206 ± 313 to 307 ± 30. (2) B = 1 in \
               Theorem 1's width, where the functions' norms in our feature spaces are 7–11 (styb) and \
               4–6 (mw): the learner explores too little and in some trials locks onto a wrong \
               candidate (T = 10⁴, 2 trials: styb 2,109 and 3,760, mw 6,308 and 5,387). GP-UCB on \
               the exact kernel, with no feature error, locks in the same way in one trial of two \
               (styb 131 and 3,327; mw 61 and 4,458), so the features are no longer the cause. With \
               B = 10 and nothing else changed (same width scale, same candidates, T = 10⁴, 4 trials) \
               styb ends at 858 on average (B = 1: 2,924; the paper: 885) and mw at 1,485 (B = 1: \
               6,230; the paper: 901), lower in 7 of the 8 paired trials. We keep B = 1: §6 states \
               it, and a B chosen on Table 1 would be tuned on a reported setting. UCB1 ends at \
               430 ± 2 (styb) and 727 ± 9 (mw), below the paper's 885 and 901. Read in 2-D \
               (dubey-table1-2d, 10 trials) mw is still 4.76× the paper's (4,293 ± 1,297): its \
               trials split on Michalewicz's narrow ridges, exact GP-UCB's too.",
        runs: &["dubey-table1", "dubey-table1-2d"],
    },
    Diagnosis {
        experiment: "dubey-table1",
        claim: &["JDP alpha=", "within 2× of the paper's"],
        cause: Cause::Constant,
        text: "The private rows inherit the non-private row's gap (its diagnosis: B = 1 against \
               norms of 4–11 leaves the learner locked onto wrong candidates in some trials) and add \
               our accounting's noise. At T = 10⁴ (2 trials, seed 0) camel's private rows are within \
               2× (1.50, 1.93, 0.89× the paper's); styb's are 2.01, 2.22 and 1.72× the paper's 1,667, \
               2,680 and 4,493; mw's 7.5, 5.2 and 3.0× (α = 1 and 0.1 at uniform play). Our \
               noise is calibrated by zCDP on the discrete Gaussian (dubey module docs), not by \
               Lemma 2's σ, so the private rows need not match the paper's scale even where the \
               non-private row does.",
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
