"""The bounds of the numeric options of the command line and of the matching arguments of the Python
functions.

A value outside its bounds is refused before any work, with one :class:`rfmodel.errors.RfmodelError` (on the
command line: one line, exit status 2) naming the option, the value and the allowed range; each option's
``--help`` states its range.  The upper bounds are what runs in a few GB of memory and a bounded time: the
largest population's survival step holds a few arrays of its size squared (about 2 GB at
:data:`MAX_POP`).  The module imports nothing, so the command line's parser reads it at no cost.
"""

#: seeds: every consumer takes them (numpy's and pymoo's generators, the result files' attributes)
MAX_SEED = 2**32 - 1
#: ``optimize``: the population of an island, its generations, the more seeds of a reference front, the
#: Monte-Carlo draws per point of a robust front, the technology nodes (nm), the points ``--validate``
#: simulates
MAX_POP, MAX_GENERATIONS, MAX_REFERENCE_SEEDS = 10_000, 10_000, 16
MAX_ROBUST_SAMPLES, MAX_NODE_NM, MAX_VALIDATE = 4096, 1000, 1000
#: ``evaluate``: Monte-Carlo samples of one call
MAX_SAMPLES = 100_000
#: ``sensitivity``: SALib's N
MAX_SENSITIVITY_SAMPLES = 50_000
#: local worker processes (``optimize``, ``calibrate``)
MAX_WORKERS = 256
#: ``calibrate``: Monte-Carlo samples of the coverage check (0: no check)
MAX_COVERAGE_SAMPLES = 4096
#: warps kept of a workload (``--max-warps``) and the SMs it is shared over (``--num-sms``)
MAX_WARPS, MAX_NUM_SMS = 1 << 20, 1 << 16
#: ``bench``: timed runs per design, the executor's problem size
MAX_BENCH_REPEAT, MAX_BENCH_EXECUTE_SCALE = 100, 16
#: ``rfmodel bench --rounds``: alternate runs of two trees
MAX_BENCH_ROUNDS = 10
#: ``workload execute``: a built-in recipe's problem size (the papers' largest original input, the CUDA
#: sample's mergeSort's 4M keys, is scale 2048)
MAX_EXECUTE_SCALE = 4096
#: ``tech query`` / ``tech import``: node (nm), one bank's capacity (KB) and width (bits), banks, clock (MHz),
#: temperature (K)
MAX_TECH_NODE_NM, MAX_CAPACITY_KB, MAX_WIDTH_BITS = 1000, 1 << 20, 1 << 16
MAX_BANKS, MAX_CLOCK_MHZ, MAX_TEMPERATURE_K = 4096, 100_000, 1000
#: ``tolerance``: the largest main-RF latency multiple the designs accept, the finest bisection step
MAX_LATENCY_X, MIN_RESOLUTION = 64, 1e-6
