//! Property-based fuzzing of the data loaders: no input makes them panic; every accepted matrix
//! is rectangular and finite; every rejection names a place and says what to do; and real-data
//! environments built from accepted matrices are usable or rejected with an error.

use ldp_learn::env::RealData;
use ldp_learn::env::table::{Table, TableError};
use nalgebra::DMatrix;
use proptest::prelude::*;

/// Text that looks like CSV: numbers, words, NaN/inf, empty cells, stray quotes and separators.
fn csvish() -> impl Strategy<Value = String> {
    let cell = prop_oneof![
        any::<f64>().prop_map(|x| x.to_string()),
        (-1e6f64..1e6).prop_map(|x| format!("{x:.3}")),
        Just(String::new()),
        Just("NaN".to_string()),
        Just("inf".to_string()),
        Just("-inf".to_string()),
        "[a-z]{1,5}",
        Just("\"1\"".to_string()),
        Just(" 2 ".to_string()),
    ];
    let line = prop::collection::vec(cell, 0..6).prop_map(|cells| cells.join(","));
    (prop::collection::vec(line, 0..8), prop_oneof![Just("\n"), Just("\r\n")])
        .prop_map(|(lines, eol)| lines.join(eol))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_never_panics(text in ".{0,400}") {
        if let Ok(t) = Table::parse(&text) {
            let _ = (t.complete(), t.zscore_covariance());
        }
    }

    #[test]
    fn csvish_text_is_parsed_or_rejected_with_a_located_message(text in csvish()) {
        match Table::parse(&text) {
            Ok(t) => {
                prop_assert!(t.names.len() >= 2 && !t.lines.is_empty());
                prop_assert_eq!(t.columns.len(), t.names.len());
                prop_assert!(t.columns.iter().all(|c| c.len() == t.lines.len()));
                prop_assert!(t.columns.iter().flatten().flatten().all(|x| x.is_finite()));
                if let Ok(m) = t.complete() {
                    prop_assert_eq!(m.shape(), (t.lines.len(), t.names.len()));
                }
            }
            Err(problem) => {
                let e = TableError { path: "f.csv".into(), problem };
                prop_assert!(e.to_string().len() > 25, "terse error: {}", e);
            }
        }
    }

    #[test]
    fn real_data_from_any_finite_matrix_is_built_or_rejected(
        rows in 1usize..6, cols in 1usize..5, cov_rows in 0usize..6,
        values in prop::collection::vec(-1e3f64..1e3, 60),
    ) {
        let samples = DMatrix::from_fn(rows, cols, |i, j| values[(i * cols + j) % values.len()]);
        let cov = DMatrix::from_fn(cov_rows, cols, |i, j| values[(7 + i * cols + 3 * j) % values.len()]);
        if let Ok(env) = RealData::from_matrix("fuzz", &samples, &cov) {
            use ldp_learn::env::Environment;
            prop_assert_eq!(env.num_arms(), cols);
            prop_assert!(env.best_mean().is_finite());
            prop_assert!((env.best_mean() - 1.0).abs() < 1e-12, "means are normalised by the largest");
            let b = env.bounds();
            prop_assert!(b.b.is_finite() && b.v.is_finite() && b.c.is_finite());
        }
    }
}
