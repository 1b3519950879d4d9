//! Every invalid parameter is rejected, each with its own error, and nothing is built.

use ldp_core::mechanism::sub_weibull_noise_bound;
use ldp_core::{
    Bound, BudgetPolicy, Delta, Epsilon, ErrorBoundDelta, LaplaceMechanism, ParamError, Preprocess,
    TruncationLevel,
};

#[test]
fn each_invalid_parameter_has_its_own_error() {
    use ParamError::*;
    let one = Epsilon::new(1.0).unwrap();
    let b1 = Bound::new(1.0).unwrap();
    let b0 = Bound::new(0.0).unwrap();
    let lvl = TruncationLevel::new(1.0).unwrap();
    let d = Delta::new(0.01).unwrap();
    let cases: Vec<(Result<(), ParamError>, ParamError)> = vec![
        (Epsilon::new(f64::NAN).map(drop), EpsilonNotFinite),
        (Epsilon::new(f64::INFINITY).map(drop), EpsilonNotFinite),
        (Epsilon::new(0.0).map(drop), EpsilonNotPositive),
        (Epsilon::new(-1.0).map(drop), EpsilonNotPositive),
        (LaplaceMechanism::ctl(Epsilon::new(1e-12).unwrap(), b1, b0).map(drop), EpsilonTooSmall),
        (Delta::new(0.0).map(drop), DeltaOutOfRange),
        (Delta::new(1.0).map(drop), DeltaOutOfRange),
        (Delta::new(f64::NAN).map(drop), DeltaOutOfRange),
        (ErrorBoundDelta::new(0.0).map(drop), ErrorBoundDeltaOutOfRange),
        (ErrorBoundDelta::new(0.5 + f64::EPSILON).map(drop), ErrorBoundDeltaOutOfRange),
        (ErrorBoundDelta::new(f64::NAN).map(drop), ErrorBoundDeltaOutOfRange),
        (Bound::new(f64::NAN).map(drop), BoundNotFinite),
        (Bound::new(f64::NEG_INFINITY).map(drop), BoundNotFinite),
        (Bound::new(-0.5).map(drop), BoundNegative),
        (LaplaceMechanism::ctl(one, b0, b0).map(drop), SensitivityZero),
        (LaplaceMechanism::ctl(one, Bound::new(1e13).unwrap(), b0).map(drop), SensitivityOutOfRange),
        (LaplaceMechanism::ctl(one, Bound::new(1e-13).unwrap(), b0).map(drop), SensitivityOutOfRange),
        (
            LaplaceMechanism::ctl(one, Bound::new(f64::MAX).unwrap(), Bound::new(f64::MAX).unwrap())
                .map(drop),
            SensitivityOutOfRange,
        ),
        (TruncationLevel::new(f64::INFINITY).map(drop), TruncationNotFinite),
        (TruncationLevel::new(0.0).map(drop), TruncationNotPositive),
        (LaplaceMechanism::with_grid(lvl, one, Preprocess::Clamp, 1).map(drop), GridOutOfRange),
        (LaplaceMechanism::with_grid(lvl, one, Preprocess::Clamp, -21).map(drop), GridOutOfRange),
        (sub_weibull_noise_bound(-1.0, 1.0, 10, d).map(drop), TailConstantInvalid),
        (sub_weibull_noise_bound(f64::NAN, 1.0, 10, d).map(drop), TailConstantInvalid),
        (sub_weibull_noise_bound(1.0, 0.0, 10, d).map(drop), TailExponentInvalid),
        (sub_weibull_noise_bound(1.0, f64::INFINITY, 10, d).map(drop), TailExponentInvalid),
        (sub_weibull_noise_bound(1.0, 1.0, 0, d).map(drop), HorizonZero),
        (BudgetPolicy::new(Epsilon::new(2.0).unwrap(), one).map(drop), PerReportAboveTotal),
    ];
    for (i, (got, want)) in cases.into_iter().enumerate() {
        assert_eq!(got, Err(want), "case {i}");
        // Each message says what to do, not just what failed.
        assert!(want.to_string().len() > 20);
    }
}

#[test]
fn grid_limits_are_inclusive() {
    let lvl = TruncationLevel::new(1.0).unwrap();
    let one = Epsilon::new(1.0).unwrap();
    // 1.0 spans 2^20 steps of 2^-20 and 1 step of 2^0.
    assert_eq!(LaplaceMechanism::with_grid(lvl, one, Preprocess::Clamp, -20).unwrap().max_index(), 1 << 20);
    assert_eq!(LaplaceMechanism::with_grid(lvl, one, Preprocess::Clamp, 0).unwrap().max_index(), 1);
}
