"""Locally differentially private Bayesian optimisation: the device of ldp-core from Python.

Type stubs of the native module (maturin ships them with ``py.typed``).
"""

from typing import Optional

import numpy as np
import numpy.typing as npt

class LdpError(Exception):
    """Base class of every error ldp_bo raises. Nothing was released when it is raised."""

class InvalidParameter(LdpError):
    """An invalid setting (epsilon, bound, noise_bound): nothing was built or released."""

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

class Reporter:
    """A simulated device: the production reporter with its lifetime privacy budget."""

    def __init__(
        self,
        eps_total: float,
        bound: float,
        noise_bound: float,
        seed: Optional[int] = None,
        *,
        eps_limit: Optional[float] = None,
    ) -> None: ...
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
    def report(self, value: float, eps: float) -> float:
        """Release ``value`` once at ``eps`` and spend eps from the budget.

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
