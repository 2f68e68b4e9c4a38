"""Statistics, pure computation (no I/O, no asyncio): Elo ratings from pairwise results
(:mod:`~referee.stats.ratings`), what the rating tables print beside them: head to head,
game pairs, LOS (:mod:`~referee.stats.headtohead`), and the sequential probability ratio test
(:mod:`~referee.stats.sprt`, with a model of duplicate play for simulations in
:mod:`~referee.stats.simulation`)."""

import os


def _one_kernel_family() -> None:
    """The ratings' linear algebra (numpy on OpenBLAS) picks its kernels by the CPU: where the CPU has
    AVX-512, its sums come out in another order and a probability's last digit differs, so the same
    results would print other bytes there (a store's standings, the golden files). Such a CPU is given
    the AVX2 kernels (``OPENBLAS_CORETYPE=Haswell``), which the others pick by themselves, so that every
    x86-64 machine with AVX2 agrees byte for byte. Set ``OPENBLAS_CORETYPE`` to choose another. It must
    be set before numpy is first imported: here, the package that imports it. (The one read of a file in
    this package: the CPU's flags, on Linux.)"""
    if "OPENBLAS_CORETYPE" in os.environ:
        return
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as info:
            flags = next((line.split() for line in info if line.startswith("flags")), [])
    except OSError:
        return
    if "avx512f" in flags and "avx2" in flags:
        os.environ["OPENBLAS_CORETYPE"] = "Haswell"


_one_kernel_family()
