"""Locally differentially private Bayesian optimisation: the device of ldp-core and the learners
of host-sim from Python.

Type stubs of the native module (maturin ships them with ``py.typed``).
"""

import os
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union, final

import numpy as np
import numpy.typing as npt

__all__ = [
    "BudgetExhausted",
    "EpsilonOutOfRange",
    "ForkedReporter",
    "InvalidParameter",
    "InvalidValue",
    "LdpError",
    "NonFiniteValue",
    "NotAsked",
    "Optimizer",
    "Reporter",
    "SeededNoiseWarning",
    "experiments",
    "learners",
    "privatise",
    "run",
]

class LdpError(Exception):
    """Base class of every error ldp_bo raises. Nothing was released when it is raised."""

class InvalidParameter(LdpError):
    """An invalid setting (epsilon, bound, noise_bound, an algorithm or experiment name, ...):
    nothing was built, released or run. The message says which and what to do."""

class NonFiniteValue(LdpError):
    """A value to release was NaN or infinite: nothing was released."""

class InvalidValue(LdpError):
    """A value to release is not a real number (a string, bool, complex number, date or other
    object): nothing was released. The message names its position and type, never the value."""

class BudgetExhausted(LdpError):
    """The device's privacy budget cannot pay for the report: nothing was released. The
    message says whether a smaller report is still possible."""

class EpsilonOutOfRange(LdpError):
    """The requested epsilon is outside the device's per-report floor and limit."""

class ForkedReporter(LdpError):
    """A Reporter was used in another process than the one that made it (os.fork): a copy
    would repeat its noise and spend its budget twice. Create the Reporter where it is used."""

class NotAsked(LdpError):
    """Optimizer.tell for another action than the one Optimizer.ask returned (or before any
    ask): the learner is unchanged."""

class SeededNoiseWarning(UserWarning):
    """A seed was given: the noise is known to whoever knows the seed. For tests only."""

def privatise(
    values: npt.ArrayLike,
    eps: float,
    bound: float,
    noise_bound: float,
    seed: Optional[int] = None,
) -> npt.NDArray[np.float64]:
    """Release every value once through the device's CTL(eps) mechanism; return the releases
    (float64, the shape of ``values``). ``seed`` is for tests only (warns)."""

@final
class Reporter:
    """A simulated device: the production reporter with its lifetime privacy budget."""

    def __new__(
        cls,
        eps_total: float,
        bound: float,
        noise_bound: float,
        seed: Optional[int] = None,
        *,
        eps_limit: Optional[float] = None,
    ) -> "Reporter": ...
    @staticmethod
    def for_reports(
        reports: int,
        eps: float,
        bound: float,
        noise_bound: float,
        seed: Optional[int] = None,
    ) -> "Reporter":
        """A Reporter whose budget pays for exactly ``reports`` reports at ``eps`` (and
        eps_limit = eps). ``Reporter(n * eps, ...)`` can be one 1e-9 unit short: 3 * 0.3 is
        0.8999999999999999 and pays two reports at 0.3."""
    def report(self, value: float, eps: float, *, level: Optional[float] = None) -> float:
        """Release ``value`` once at ``eps`` and spend eps from the budget. With ``level`` (the
        truncation level ``Optimizer.device_level`` gives for LDP-RSE) the value is set to 0
        outside [-level, level] and the noise scaled to the level, else clamped to B + R.

        Its time depends on the noise drawn (whoever times it learns about |noise|, and with
        the release the value up to sign): the device hides this in a fixed reply slot, this
        call has none, so a process answering a remote learner replies at a fixed time or in
        batches, never as soon as it returns."""
    @property
    def budget_remaining(self) -> float: ...
    @property
    def budget_spent(self) -> float: ...
    @property
    def eps_total(self) -> float: ...
    @property
    def eps_limit(self) -> float: ...
    @property
    def eps_floor(self) -> float: ...

@final
class Optimizer:
    """A learner driven by ask/tell on the device's releases. It never privatises: tell it what
    the device released at eps, never the raw measurement. Actions are indices into the domain
    (``points[i]`` is action i's point), or with ``bounds`` points of a box (float64 arrays of
    length d)."""

    def __new__(
        cls,
        points: Optional[npt.ArrayLike] = None,
        algorithm: str = "ldp-tgp-ucb",
        *,
        eps: Optional[float] = 1.0,
        bound: float = 1.0,
        noise_bound: float = 1.0,
        horizon: int = 1000,
        constants: str = "calibrated",
        seed: Optional[int] = None,
        kernel: Optional[str] = None,
        lengthscale: Optional[float] = None,
        arms: Optional[int] = None,
        covariance: Optional[npt.ArrayLike] = None,
        bounds: Optional[npt.ArrayLike] = None,
    ) -> "Optimizer": ...
    def ask(self, q: Optional[int] = None) -> Union[int, npt.NDArray[np.float64], npt.NDArray[np.int64]]:
        """The action to measure next (an index into the domain; with bounds a point of the
        box); the same until ``tell``. With q: q more actions at once (an int64 array; with
        bounds a (q, d) array), chosen as if the pending ones had been told their posterior
        mean (GP-BUCB)."""
    def tell(self, action: Union[int, npt.ArrayLike], report: Union[float, npt.ArrayLike]) -> None:
        """The device's release for an action asked (with bounds: for the point measured, a
        point of the box); arrays of actions and reports tell several, in any order."""
    def forget(self, action: Union[int, npt.ArrayLike]) -> None:
        """Abandon an action asked whose report will never come (NotAsked if not pending)."""
    @property
    def pending(self) -> Union[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        """The actions asked and not yet told, in the order asked."""
    def recommend(self) -> Union[int, npt.NDArray[np.float64]]:
        """The most measured action (ties: the higher mean report, then the lower index); with
        bounds the told point of best posterior mean."""
    def posterior(self, x: npt.ArrayLike) -> Tuple[float, float]:
        """With bounds: the posterior (mean, variance) at the point x of the box."""
    @property
    def algorithm(self) -> str: ...
    @property
    def n_actions(self) -> int:
        """The number of actions (AttributeError with bounds: a box has infinitely many)."""
    @property
    def points(self) -> Optional[npt.NDArray[np.float64]]: ...
    @property
    def bounds(self) -> Optional[npt.NDArray[np.float64]]: ...
    @property
    def dimension(self) -> Optional[int]: ...
    @property
    def pulls(self) -> npt.NDArray[np.uint64]:
        """Reports told per action (AttributeError with bounds)."""
    @property
    def told(self) -> int: ...
    @property
    def lengthscales(self) -> Tuple[npt.NDArray[np.float64], float]:
        """With bounds: the kernel's lengthscales (in the box's units) and signal scale."""
    @property
    def fits(self) -> int:
        """With bounds: how many times the kernel has been fitted."""
    @property
    def device_level(self) -> Optional[float]: ...
    @property
    def constants(self) -> Dict[str, float]: ...
    @property
    def settings(self) -> Dict[str, Any]: ...
    @property
    def seed(self) -> int: ...

def learners(private: bool = True) -> List[str]:
    """The learners ``Optimizer`` builds, by name (with private=False: the names for eps=None)."""

def experiments() -> Dict[str, str]:
    """The named experiments ``run`` takes: {name: description}."""

def run(
    experiment: str,
    *,
    trials: Optional[int] = None,
    horizon: Optional[int] = None,
    seed: Optional[int] = None,
    eps: Optional[float] = None,
    constants: str = "calibrated",
    threads: Optional[int] = None,
    algorithms: Optional[Sequence[str]] = None,
    noise: Optional[str] = None,
    prior: Optional[str] = None,
    beta_scale: Optional[float] = None,
    data: Optional[Union[str, "os.PathLike[str]"]] = None,
    as_frame: bool = False,
) -> Dict[str, Any]:
    """Run a named experiment as ``host-sim run`` does: its finals (finals.csv's columns), the
    summary table, the curves and the derived constants. Equal to the CLI's for the same
    settings, whatever ``threads``."""
