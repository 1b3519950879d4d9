//! The p-sum bookkeeping of the binary mechanism (Tao et al. Alg. 2, lines 6–12), written once
//! over flat storage for every tree: the const-array trees of this module ([`PSums`]) and the
//! run-time sized symmetric-matrix tree of [`crate::jdp`].
//!
//! A tree of `width` entries per node (1 for a scalar, D for a vector, m(m+1)/2 for a packed
//! symmetric matrix) keeps one exact and one noisy node per level, stored level after level:
//! level j is `exact[j·width..(j+1)·width]`, and likewise in `noisy`. Every sum is a saturating
//! `i64` addition, always in the same order (the new leaf first, then levels 0, 1, … below the
//! closed one; a release adds its levels from the lowest up), and the noise is drawn once per
//! entry of the closed node, entries in order. A storage that cannot hold time t is an error,
//! never an index panic.

use crate::mechanism::MAX_RELEASE_INDEX;

/// The storage does not fit the request: a zero node width, time t outside `1..2^levels`
/// (`0..2^levels` for a release), noisy storage shorter than the exact storage, or an output of
/// a length other than the node width. Nothing was changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StorageMismatch;

/// The number of whole levels in `storage` if every `t ≤ time` fits in them, i.e. `time <
/// 2^levels`.
fn levels_holding(storage: &[i64], width: usize, time: u64) -> Result<usize, StorageMismatch> {
    let levels = storage.len().checked_div(width).ok_or(StorageMismatch)?;
    let fits = u32::try_from(levels).ok().and_then(|l| time.checked_shr(l)).is_none_or(|high| high == 0);
    if fits { Ok(levels) } else { Err(StorageMismatch) }
}

/// Close the node of time `1 ≤ t < 2^levels` at level `i = trailing_zeros(t)`:
///
/// ```text
/// α_i ← leaf + Σ_{j<i} α_j,     α_j, α̂_j ← 0 for j < i,     α̂_i ← α_i + noise(i) entry by entry.
/// ```
///
/// `leaf` writes the new element into the (stale) node slot and must set every entry of it;
/// writing it in place needs no temporary buffer, however wide the node. Both slices hold the
/// levels of [the module](self); an error changes nothing and draws no noise.
pub(crate) fn close(
    exact: &mut [i64],
    noisy: &mut [i64],
    width: usize,
    t: u64,
    leaf: impl FnOnce(&mut [i64]),
    mut noise: impl FnMut(usize) -> i64,
) -> Result<(), StorageMismatch> {
    if t == 0 || noisy.len() < exact.len() {
        return Err(StorageMismatch);
    }
    levels_holding(exact, width, t)?;
    let level = t.trailing_zeros() as usize;
    // level < levels ≤ 64, so level·width ≤ exact.len() and the splits below are in range.
    let start = level * width;
    let (lower, rest) = exact.split_at_mut_checked(start).ok_or(StorageMismatch)?;
    let node = rest.get_mut(..width).ok_or(StorageMismatch)?;
    let (noisy_lower, noisy_rest) = noisy.split_at_mut_checked(start).ok_or(StorageMismatch)?;
    let noisy_node = noisy_rest.get_mut(..width).ok_or(StorageMismatch)?;
    leaf(node);
    for below in lower.chunks_exact_mut(width) {
        for (a, e) in node.iter_mut().zip(below.iter_mut()) {
            *a = a.saturating_add(*e);
            *e = 0;
        }
    }
    noisy_lower.fill(0);
    for (n, a) in noisy_node.iter_mut().zip(node.iter()) {
        *n = a.saturating_add(noise(level));
    }
    Ok(())
}

/// Write the release of time `0 ≤ t < 2^levels`, `Ŝ(t) = Σ_{j : Bin_j(t) = 1} α̂_j` (all zeros
/// at t = 0), into `out` of `width` entries, each clamped to ±2^52 ([`MAX_RELEASE_INDEX`]).
pub(crate) fn release_into(
    noisy: &[i64],
    width: usize,
    t: u64,
    out: &mut [i64],
) -> Result<(), StorageMismatch> {
    if out.len() != width {
        return Err(StorageMismatch);
    }
    levels_holding(noisy, width, t)?;
    out.fill(0);
    // t < 2^levels, so every set bit j of t names a stored level (and j < 64).
    for (j, node) in noisy.chunks_exact(width).enumerate().take(64) {
        if (t >> j) & 1 == 1 {
            for (o, n) in out.iter_mut().zip(node) {
                *o = o.saturating_add(*n);
            }
        }
    }
    for o in out.iter_mut() {
        *o = (*o).clamp(-MAX_RELEASE_INDEX, MAX_RELEASE_INDEX);
    }
    Ok(())
}

/// The p-sums of a const-array tree: `L` levels of `D`-vectors of grid indices.
pub(super) struct PSums<const D: usize, const L: usize> {
    exact: [[i64; D]; L],
    noisy: [[i64; D]; L],
}

impl<const D: usize, const L: usize> PSums<D, L> {
    pub(super) const fn new() -> Self {
        Self { exact: [[0; D]; L], noisy: [[0; D]; L] }
    }

    /// [`close`] the node of time `1 ≤ t < 2^L` with the leaf `x`, then release Ŝ(t).
    pub(super) fn push(
        &mut self,
        t: u64,
        x: &[i64; D],
        noise: impl FnMut(usize) -> i64,
    ) -> Result<[i64; D], StorageMismatch> {
        let (exact, noisy) = (self.exact.as_flattened_mut(), self.noisy.as_flattened_mut());
        close(exact, noisy, D, t, |node| node.copy_from_slice(x), noise)?;
        self.prefix(t)
    }

    /// Ŝ(t) for `0 ≤ t < 2^L`, each coordinate clamped to ±2^52.
    pub(super) fn prefix(&self, t: u64) -> Result<[i64; D], StorageMismatch> {
        let mut out = [0i64; D];
        release_into(self.noisy.as_flattened(), D, t, &mut out)?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    //! The flat bookkeeping on its own: refusals change nothing, and it never panics.
    use super::*;

    #[test]
    fn storage_that_cannot_hold_t_is_refused_and_left_unchanged() {
        let (mut exact, mut noisy) = ([5i64; 6], [7i64; 6]); // 3 levels of width 2: t < 8
        let mut drew = false;
        for (width, t) in [(2, 0), (2, 8), (2, 1 << 63), (0, 1), (4, 4), (7, 1)] {
            let r = close(
                &mut exact,
                &mut noisy,
                width,
                t,
                |n| n.fill(1),
                |_| {
                    drew = true;
                    1
                },
            );
            assert_eq!(r, Err(StorageMismatch), "width {width}, t = {t}");
        }
        assert!(!drew);
        assert_eq!((exact, noisy), ([5; 6], [7; 6]));
        assert_eq!(close(&mut exact, &mut noisy[..4], 2, 1, |n| n.fill(1), |_| 0), Err(StorageMismatch));
        let mut out = [0i64; 2];
        assert_eq!(release_into(&noisy, 2, 8, &mut out), Err(StorageMismatch));
        assert_eq!(release_into(&noisy, 2, 1, &mut [0; 3]), Err(StorageMismatch));
        assert_eq!(release_into(&noisy, 0, 0, &mut []), Err(StorageMismatch));
        assert_eq!(release_into(&noisy, 2, 7, &mut out), Ok(()));
        assert_eq!(out, [21, 21]);
        assert_eq!(release_into(&noisy, 2, 0, &mut out), Ok(()));
        assert_eq!(out, [0, 0]);
    }

    /// Naive reference: Ŝ(t) = S(t) + the noise of the nodes of t's dyadic decomposition of
    /// [1, t], the node ending at e = t, then at e − lowbit(e), … (each closed at its end e).
    #[test]
    fn releases_are_the_exact_sums_plus_the_noise_of_the_dyadic_nodes_of_t() {
        const WIDTH: usize = 3;
        const LEVELS: usize = 7;
        let x = |t: u64, e: usize| (t as i64 * 37 + e as i64 * 11) % 23 - 11;
        // The draw for entry e of the node closed at t: distinct for every (t, e), so a
        // release that used a wrong node, level or entry order could not match.
        let tag = |t: u64, e: usize| (t as i64) << 8 | e as i64;
        let mut exact = [0i64; WIDTH * LEVELS];
        let mut noisy = [0i64; WIDTH * LEVELS];
        let mut sums = PSums::<WIDTH, LEVELS>::new();
        let mut out = [0i64; WIDTH];
        let mut total = [0i64; WIDTH];
        for t in 1..(1u64 << LEVELS) {
            let leaf: [i64; WIDTH] = core::array::from_fn(|e| x(t, e));
            let mut entry = 0;
            let mut draw = |level: usize| {
                assert_eq!(level, t.trailing_zeros() as usize);
                entry += 1;
                tag(t, entry - 1)
            };
            close(&mut exact, &mut noisy, WIDTH, t, |n| n.copy_from_slice(&leaf), &mut draw).unwrap();
            let mut entry = 0;
            let pushed = sums.push(t, &leaf, |_| {
                entry += 1;
                tag(t, entry - 1)
            });
            release_into(&noisy, WIDTH, t, &mut out).unwrap();
            let mut expected = [0i64; WIDTH];
            for (e, (want, sum)) in expected.iter_mut().zip(total.iter_mut()).enumerate() {
                *sum += leaf[e];
                *want = *sum;
                let mut end = t;
                while end > 0 {
                    *want += tag(end, e);
                    end -= 1 << end.trailing_zeros();
                }
            }
            assert_eq!(out, expected, "t = {t}");
            assert_eq!(pushed, Ok(expected), "t = {t}");
        }
    }

    #[test]
    fn a_closed_node_adds_the_levels_below_it_to_its_leaf_and_empties_them() {
        let mut exact = [1, 2, 10, 20, 100, 200];
        let mut noisy = [-1, -2, -10, -20, -100, -200];
        let mut levels = std::vec::Vec::new();
        close(
            &mut exact,
            &mut noisy,
            2,
            4,
            |n| n.copy_from_slice(&[3, 4]),
            |l| {
                levels.push(l);
                1000
            },
        )
        .unwrap();
        assert_eq!(levels, [2, 2]);
        assert_eq!(exact, [0, 0, 0, 0, 14, 26]);
        assert_eq!(noisy, [0, 0, 0, 0, 1014, 1026]);
    }

    #[test]
    fn saturating_sums_and_releases_clamped_to_the_public_range() {
        let mut sums = PSums::<2, 3>::new();
        assert_eq!(sums.push(1, &[i64::MAX, i64::MIN], |_| 1), Ok([MAX_RELEASE_INDEX, -MAX_RELEASE_INDEX]));
        // i64::MIN + i64::MAX = −1: the noise is added to the saturated sum.
        assert_eq!(sums.push(2, &[1, -1], |_| i64::MAX), Ok([MAX_RELEASE_INDEX, -1]));
        assert_eq!(sums.exact, [[0, 0], [i64::MAX, i64::MIN], [0, 0]]);
        assert_eq!(sums.push(8, &[0, 0], |_| 0), Err(StorageMismatch));
        assert_eq!(sums.prefix(2), Ok([MAX_RELEASE_INDEX, -1]));
    }
}
