//! Gaussian-process machinery for the learner (SPEC §2.1).
//!
//! - [`kernel`]: the [`Kernel`] trait, squared exponential and Matérn (ν = 1/2, 3/2, 5/2)
//!   kernels, and [`gram_matrix`].
//! - [`covariance`]: [`FiniteCovariance`], a validated user-supplied covariance matrix over a
//!   finite domain {0, …, n−1}, usable as a kernel (the real-data experiments of Zhou & Tan §5.1).
//! - [`posterior`]: [`FinitePosterior`], the exact posterior of Zhou & Tan eq. (2), (3) over a
//!   finite candidate set, updated by an O(n²) rank-one step per observation, with the
//!   information gain γ̂_t.
//! - [`cholesky`]: [`CholeskyPosterior`], the same posterior at arbitrary points from a Cholesky
//!   factor of K_t + λI grown by one row (O(t²)) per observation.
//! - [`nystrom`]: [`NystromEmbedding`], Zhou & Tan Appendix D Algorithm 4.
//!
//! Nothing here panics on input: every constructor and update validates and returns a typed
//! error; the only randomness (dictionary sampling) comes from an injected RNG.

pub mod cholesky;
pub mod covariance;
pub mod kernel;
pub mod nystrom;
pub mod posterior;

pub use cholesky::CholeskyPosterior;
pub use covariance::{FiniteCovariance, SYMMETRY_RTOL};
pub use kernel::{Kernel, KernelError, Matern, MaternNu, SquaredExponential, gram_matrix};
pub use nystrom::{NystromEmbedding, NystromError, PINV_RTOL};
pub use posterior::{FinitePosterior, PosteriorError};
