"""The interval model's inputs as two records: the SM as a design point resolves it (:class:`SmTerms`) and
what a design changes in the shared model (:class:`Effects`).

:func:`rfmodel.analytic.model.sm_interval` resolves a grid's SM fields and a design's :class:`Effects` into
:class:`SmTerms` (occupancy, the banks' mapping and rotations, the L1D a design leaves, the interconnect's
costs) and hands both records to :func:`rfmodel.analytic.throughput.interval_model`, which reads the
design's terms from the :class:`Effects` it gets whole.  Every field broadcasts against the grid.

==================  ======================================================================
``Effects`` field   meaning (all broadcast against the grid)
==================  ======================================================================
``read_share``      share of the operand reads (slots or distinct sources) that reach the banks
``write_share``     share of the results written to the banks
``collect_share``   share of an instruction's base collection time (its reads' serialization over the
                    ports beyond its first access, the collectors' read stage) that remains (default:
                    ``read_share``); 1 where the reads that do not reach
                    these banks take a bank's time elsewhere (a register-file cache's misses read the
                    main RF's banks)
``bank_loads``      ``(table, index)``: the distribution of an instruction's largest load on one bank of
                    the reads that reach the banks (``[k, banks, load]`` tables as the profile's
                    ``ser_pmf``, and which one each point reads), where the design knows which reads it
                    serves (BOW's window); default: the profile's, each read served independently
                    with ``read_share``
``operand_slots``   the collectors read every operand slot (``True``) or each distinct source
                    register once (``False``); the bank-serialization table follows it
``extra_collect``   cycles added to every operand collection (a slower structure behind it)
``extra_latency``   cycles added to every result's latency outside the collectors (a pipeline stage
                    after collection: a tag check whose data access follows)
``bank_cycles``     cycles one bank read holds its bank (slow banks)
``bank_write_cycles``  cycles one bank write holds it (default: ``bank_cycles``)
``write_hold``      cycles a consumer waits behind its producer's write beyond a one-cycle write
                    (default ``bank_write_cycles - 1``; a write buffer that serves the value
                    changes it)
``write_defer``     share of the bank writes a write buffer holds back until no read waits for the
                    bank (they queue behind the reads; default 0: writes go first)
``l1d_lines``       lines of the L1D the loads see (default the SM's; a design whose structure
                    holds the L1D's lines, e.g. beside registers, gives what it leaves them; 0: no
                    L1D, every access goes to the L2 slice without the L1D's latency or MSHRs)
``l1d_assoc``       that L1D's ways (default the SM's)
``l1d_hits``        the L1D's hit rates (of every access, of the loads) when the design computes them
                    itself (default: from ``l1d_lines`` and ``l1d_assoc``)
``l1d_write_allocate`` false where those rates are of a store policy that takes no line at a store miss
                    (the anchor curve then places them among rates of the same policy)
``bank_claims``     accesses per instruction of the design's own that take the banks' read ports
                    before the reads (line lookups in a tag array that is the banks' arbiter)
``warp_per_bank``   every register of a warp sits in one bank (its sources serialize there), whatever
                    the SM's own mapping
``scattered_banks`` registers sit in banks an allocator chose, not the SM's interleaving of register
                    numbers: each distinct source of an instruction in any bank of the warp's pool
                    alike (:meth:`~rfmodel.analytic.profile.WorkloadProfile.ser_scattered`)
``greedy_spread``   with one bank per warp and greedy-then-oldest schedulers, the warps that share a
                    scheduler's issue at once, 1 + k c1 / b (c1: one warp's cycles per instruction
                    alone without memory waits, b: its bank cycles per instruction); this is k
``issue_stall``     cycles per instruction a warp is held at issue whatever its dependences (a
                    register refilled from the memory side first): added to each warp's time in the
                    latency bound
``issuing_warps``   the warps that issue at once where a design holds the other resident warps back
                    (default every resident warp): the model runs at the smaller of the two
==================  ======================================================================

The :class:`Effects` fields ``l1d_lines``, ``l1d_assoc``, ``warp_per_bank``, ``scattered_banks`` and
``issuing_warps`` change the SM the model sees: ``sm_interval`` applies them to :class:`SmTerms`
(``l1d_lines``, ``l1d_assoc``, ``mapping``, ``warps``), and ``l1d_write_allocate`` chooses the anchor's
curve (:meth:`rfmodel.analytic.model.AnalyticContext.model`); the interval model reads the rest.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Effects:
    """What a design changes in the shared SM model (the module docstring's table); the defaults change
    nothing."""

    read_share: object = 1.0
    write_share: object = 1.0
    collect_share: object = None
    bank_loads: object = None
    operand_slots: bool = True
    extra_collect: object = 0.0
    bank_cycles: object = 1.0
    bank_write_cycles: object = None
    write_hold: object = None
    write_defer: object = 0.0
    l1d_lines: object = None
    l1d_assoc: object = None
    bank_claims: object = 0.0
    warp_per_bank: bool = False
    scattered_banks: bool = False
    greedy_spread: object = 2.0
    extra_latency: object = 0.0
    l1d_hits: object = None
    l1d_write_allocate: bool = True
    issue_stall: object = 0.0
    issuing_warps: object = None


#: the effects of no design: the baseline's model (the default wherever effects are optional)
NO_EFFECTS = Effects()


@dataclass(frozen=True)
class SmTerms:
    """One SM as the interval model sees it at the grid's points, a design's changes to the SM applied
    (every field broadcasts).

    ``warps``: the warps that issue (resident, or fewer where a design holds some back); ``schedulers``,
    ``issue_width``: the warp schedulers and the instructions each issues a cycle; ``banks``,
    ``ports_per_bank``: the register banks and the accesses each serves a cycle (slow banks: one);
    ``separate_write_ports``: results are written through ports of their own; ``collectors``: operand
    collector units; ``rf_latency``: cycles of a bank read; ``initiation``: cycles between issues to a unit
    per op class.  ``mem_bytes_per_cycle``: the DRAM's bandwidth at the SM; ``l1d_lines`` (0: no L1D, every
    access goes to the L2 slice without the L1D's latency or MSHRs), ``line_bytes``, ``l1d_assoc`` (``None``:
    fully associative), ``l1d_write_allocate``: the L1D; ``l1_hit_latency``, ``miss_latency``: a hit's and a
    miss's cycles; ``mshr``: the L1D's miss entries; ``l2_lines``, ``l2_hit_latency``, ``l2_assoc``: the
    SM's L2 slice (``None``: every L1D miss goes to DRAM at ``miss_latency``).
    ``sub_core``: each scheduler has banks and collectors of its own; ``mapping``: how registers sit in the
    banks, ``"interleaved"`` (by number), ``"warp-per-bank"`` or ``"scattered"`` (an allocator's);
    ``interleave_banks``: the banks a warp's registers interleave over (``None``: ``banks``);
    ``rotations``: the distinct bank rotations among the warps that share a pool of banks (``None``: as
    many as banks, i.e. none shared), warps of one rotation read the same banks when they run the same code,
    which makes bank arrivals burstier by ``1 + align_burst / rotations``.
    ``greedy``: the schedulers are greedy-then-oldest; ``pool_warps``: the two-level scheduler's active
    warps per SM (``None``: every resident warp may issue), which bound IPC by ``rate_pool``, the pool's
    warps each at its single-warp dependence pace without memory waits.  ``unit_of_class``, ``unit_slots``:
    the execution units the op classes issue to and their slots (``None``: each class its own bound at one
    pipeline a scheduler); ``noc_reply``, ``noc_request``, ``noc_store``, ``noc_ack``: cycles the SM's
    interconnect ports are busy per line (:func:`rfmodel.analytic.model.icnt_costs`); ``collector_sets``:
    typed operand-collector sets (``[k, 2]``: each set's units as a share of ``collectors``, and the share
    of the instructions that take it; ``None``: one pool serves every instruction), each with its own queue
    and bound (:func:`rfmodel.spec.occupancy.collector_set_shares`)."""

    warps: object
    schedulers: object
    issue_width: object
    banks: object
    collectors: object
    initiation: object
    ports_per_bank: object = 1
    separate_write_ports: bool = False
    rf_latency: object = 1
    mem_bytes_per_cycle: object = np.inf
    l1d_lines: object = 128
    line_bytes: object = 128
    l1_hit_latency: object = 30.0
    miss_latency: object = 250.0
    mshr: object = 64
    sub_core: bool = False
    mapping: str = "interleaved"
    interleave_banks: object = None
    rotations: object = None
    l2_lines: object = None
    l2_hit_latency: object = None
    l1d_assoc: object = None
    l2_assoc: object = None
    l1d_write_allocate: bool = True
    greedy: bool = False
    pool_warps: object = None
    unit_of_class: object = None
    unit_slots: object = None
    noc_reply: object = 0.0
    noc_request: object = 0.0
    noc_store: object = 0.0
    noc_ack: object = 0.0
    collector_sets: object = None
