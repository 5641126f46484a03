"""Paper-derived cells: TFET and DWM from the Latency-Tolerant Register File's Table 2, and the STT-RAM
register-file paper's own STT-RAM cell (``stt-ram-paper``) from its Table 1 (:func:`stt_cell_factors`).

Neither cell is in the CACTI or NVSim grids, and the paper gives no absolute
numbers for them, only Table 2: each register-file configuration relative to
config #1 (256 KB of HP SRAM in 16 banks of 16 KB, crossbar).  Configs #3, #6
and #7 share one organisation (8x banks of 16 KB joined by a flattened
butterfly) and differ only in the cell (HP SRAM, TFET SRAM, DWM), so the cell
multipliers follow from the ratios #6/#3 and #7/#3:

* area and power multipliers are the bank-level ratios themselves
  (``area_x / area_3``, ``power_x / power_3``): in Table 2 both grow exactly
  with capacity for the SRAM configs #2 and #3, so the network is not a visible
  part of either column, and one multiplier is applied to dynamic energy and
  leakage alike (the only choice that keeps the power ratio independent of the
  activity, which the paper does not give);
* the latency multiplier removes the network: with the model's own bank access
  ``t_b`` (CACTI HP SRAM, 16 KB, 1024-bit rows) and flattened-butterfly latency
  ``t_n`` of the #3 organisation, and ``t_n,x`` of the same network over the
  cell's own (denser or not) bank array,
  ``k_L = ((L_x / L_3) (t_b + t_n) - t_n,x) / t_b``.

DWM (a racetrack whose cells are read through a magnetic tunnel junction, per
"Racetrack memory cell array with integrated magnetic tunnel junction
readout", cited by the paper) splits its access into a port access, costed
like the SRAM bank's, and a shift: with ``N`` domains per track and one port,
a random access shifts ``(N^2 - 1) / (3 N)`` steps on average; the shift takes
``(k_L - 1) t_b`` of the access at the reference bank, and the same share of
its energy (an assumption: the paper gives only totals).  Shift time per step
scales with the node (domain pitch), shift energy per step and bit with the
CACTI reference bank's dynamic energy (:mod:`rfmodel.tech.scaling`).

The multipliers are constants: TFET and DWM banks scale with capacity, width,
ports and node like the HP-SRAM bank.  Reproducing Table 2 rows #6 and #7 is
therefore a consistency check of this derivation, not an independent
validation (rows #2-#5 are).

``stt-ram-paper``: the STT-RAM register-file paper's Table 1 compares SRAM
and STT-RAM banks of one register file (16 x 8 KB, 1024-bit rows, 32 nm,
700 MHz) inside one tool (NVSim), so its STT/SRAM ratios are cell
multipliers on the HP-SRAM bank: area, leakage, read and write energy per
bit each by its own ratio, read time x1 (one cycle like SRAM) and a write
that takes the paper's 4 cycles at 700 MHz (see :func:`stt_cell_factors`).
"""

from __future__ import annotations

import math

from rfmodel.tech.array import PAPER_CELL_FACTORS
from rfmodel.tech.data import assumptions, paper_tables


def ltrf_organisation(
    lib, cell: str, banks_x: float, bank_size_x: float, network: str, node_nm: float | None = None
):
    """Area (mm^2), power (mW), latency (ns) and capacity (KB) of one Table 2 configuration.

    Banks plus network; power = leakage + dynamic energy at the reference activity (``assumptions.toml``:
    reads and writes of a warp register per cycle at the paper's clock), each transfer crossing the network.
    Returns a dict with the bank-only parts too.
    """
    from rfmodel.tech.interconnect import network as make_network

    t2 = paper_tables()["ltrf_table2"]
    a = assumptions()["ltrf_reproduction"]
    node = a["node_nm"] if node_nm is None else node_nm
    banks = int(t2["base_banks"] * banks_x)
    bank_kb = t2["base_bank_kb"] * bank_size_x
    width = t2["width_bits"]
    f_hz = t2["clock_mhz"] * 1e6
    bank = lib.array_cost(cell, node, bank_kb, width, ports=a["ports"], banks=banks)
    span = math.sqrt(float(bank.total_area_mm2))
    net = make_network(network, banks, t2["collectors"], width, node, span, lib=lib)
    r, w = a["reads_per_cycle"], a["writes_per_cycle"]
    bank_dyn_mw = (r * float(bank.read_energy_pj) + w * float(bank.write_energy_pj)) * 1e-12 * f_hz * 1e3
    bank_power = float(bank.total_leakage_mw) + bank_dyn_mw
    net_power = net.leakage_mw + (r + w) * net.transfer_pj * 1e-12 * f_hz * 1e3
    return {
        "capacity_kb": banks * bank_kb,
        "bank_area_mm2": float(bank.total_area_mm2),
        "bank_power_mw": bank_power,
        "bank_latency_ns": float(bank.access_ns),
        "net_area_mm2": net.area_mm2,
        "net_power_mw": net_power,
        "net_latency_ns": net.latency_ns,
        "area_mm2": float(bank.total_area_mm2) + net.area_mm2,
        "power_mw": bank_power + net_power,
        "latency_ns": float(bank.access_ns) + net.latency_ns,
        "bank": bank,
        "network": net,
    }


def ltrf_cell_factors(lib) -> dict:
    """Multipliers of ``tfet`` and ``dwm`` on the HP-SRAM bank (see the module docstring), with provenance."""
    if "ltrf_cell_factors" in lib._cache:
        return lib._cache["ltrf_cell_factors"]
    t2 = paper_tables()["ltrf_table2"]
    rows = {r["config"]: r for r in t2["rows"]}
    ref = ltrf_organisation(lib, "sram-hp", 8, 1, "flattened-butterfly")
    from rfmodel.tech.interconnect import flattened_butterfly

    t_b, t_n = ref["bank_latency_ns"], ref["net_latency_ns"]
    node = assumptions()["ltrf_reproduction"]["node_nm"]
    net3 = ref["network"]
    out = {}
    for cell, cfg in (("tfet", 6), ("dwm", 7)):
        r, r3 = rows[cfg], rows[3]
        k_area = r["area"] / r3["area"]
        k_power = r["power"] / r3["power"]
        span = math.sqrt(k_area * ref["bank_area_mm2"])
        t_nx = flattened_butterfly(net3.inputs, net3.outputs, net3.width_bits, node, span, lib=lib).latency_ns
        k_lat = max((r["latency"] / r3["latency"] * (t_b + t_n) - t_nx) / t_b, 1.0)
        src = f"{t2['provenance']}: config #{cfg} / #3"
        prov = {
            "area_mm2": f"x{k_area:.4g} = area #{cfg}/#3 ({src})",
            "leakage_mw": f"x{k_power:.4g} = power #{cfg}/#3 ({src})",
            "read_energy_pj": f"x{k_power:.4g} = power #{cfg}/#3 ({src})",
            "write_energy_pj": f"x{k_power:.4g} = power #{cfg}/#3 ({src})",
            "access_ns": (
                f"x{k_lat:.4g} = (latency ratio #{cfg}/#3 x (t_bank + t_net) - t_net,cell) / t_bank with "
                f"t_bank = {t_b:.3g} ns, t_net = {t_n:.3g} ns, t_net,cell = {t_nx:.3g} ns at {node} nm "
                f"({src})"
            ),
        }
        prov["write_ns"] = prov["access_ns"]
        prov["cycle_ns"] = prov["access_ns"]
        f = {"area": k_area, "power": k_power, "latency": k_lat, "node_nm": float(node), "provenance": prov}
        if cell == "dwm":
            n = assumptions()["dwm"]["domains_per_track"]
            steps = (n * n - 1) / (3.0 * n)
            share = (k_lat - 1.0) / k_lat
            bank = ref["bank"]
            f["mean_shift_steps"] = steps
            f["shift_share"] = share
            f["shift_ns_per_step"] = (k_lat - 1.0) * t_b / steps
            f["shift_pj_per_step_bit"] = (
                k_power * float(bank.read_energy_pj) * share / (steps * float(bank.width_bits))
            )
            note = (
                f"; {n} domains per track, mean shift {steps:.3g} steps, shift share {share:.3g} of latency "
                f"and energy ({assumptions()['dwm']['provenance']})"
            )
            for m in ("access_ns", "write_ns", "cycle_ns", "read_energy_pj", "write_energy_pj"):
                prov[m] += note
        out[cell] = f
    lib._cache["ltrf_cell_factors"] = out
    return out


PAPER_CELL_FACTORS["ltrf"] = ltrf_cell_factors


def stt_cell_factors(lib) -> dict:
    """Multipliers of ``stt-ram-paper`` on the HP-SRAM bank, from the STT-RAM register-file paper's Table 1.

    Table 1 compares SRAM and STT-RAM banks of the same register file inside NVSim, so each STT/SRAM ratio
    is a cell multiplier: area ``0.038/0.194``, leakage ``16.2/248.7``, read energy ``0.239/0.203`` and write
    energy ``0.300/0.191`` (per bit; the rows are equally wide), read time x1 (one cycle, like SRAM).  The
    write takes the paper's 4 cycles at 700 MHz: ``write_ns = max(SRAM write_ns, 4 x 1000/700 ns)``, and the
    cycle time likewise.  The floor is exactly 4 cycles' time (5.714 ns), the longest write that is still 4
    whole cycles at 700 MHz: ``4000/700 x 700/1000`` is exactly 4.0 in binary floating point and
    :func:`~rfmodel.tech.array.cycles` rounds up only beyond a 1e-9 tolerance, so 4 cycles come out, not 5.
    It is held constant across nodes, sizes and clocks (an MTJ switching time, not a periphery delay).
    ``lib`` is unused (the factors are the table's own numbers); it keeps the registry's signature.
    """
    t = paper_tables()["stt_table1"]
    s, m = t["sram"], t["stt"]
    clock, wc = float(t["clock_mhz"]), int(m["write_cycles"])
    write_ns = wc * 1000.0 / clock
    src = f"{t['provenance']}; STT-RAM/SRAM ratio"

    def ratio(key, what, unit):
        k = m[key] / s[key]
        return k, f"x{k:.4g} = STT/SRAM {what} {m[key]:g}/{s[key]:g} {unit} ({src})"

    k_area, p_area = ratio("area_mm2", "area", "mm^2")
    k_leak, p_leak = ratio("leakage_mw", "leakage", "mW")
    k_read, p_read = ratio("read_pj_per_bit", "read energy", "pJ/bit")
    k_write, p_write = ratio("write_pj_per_bit", "write energy", "pJ/bit")
    k_lat = m["read_cycles"] / s["read_cycles"]
    at_clock = write_ns * clock / 1000.0  # exactly wc in binary floating point (4000/700 x 700/1000 = 4.0)
    floor = (
        f"{wc} cycles at {clock:g} MHz = {wc} x 1000/{clock:g} ns = {write_ns:.4g} ns: exactly {wc} cycles' "
        f"time, the longest write that is still {wc} whole cycles at {clock:g} MHz (it is {at_clock!r} "
        f"cycles there and cycles() rounds up only beyond a 1e-9 tolerance, so {wc} cycles, not {wc + 1}); "
        "constant across nodes and sizes (the MTJ write, not a periphery delay)"
    )
    prov = {
        "area_mm2": p_area,
        "leakage_mw": p_leak,
        "read_energy_pj": p_read,
        "write_energy_pj": p_write,
        "access_ns": f"x{k_lat:g} = STT/SRAM read cycles {m['read_cycles']}/{s['read_cycles']} ({src})",
        "write_ns": f"max(SRAM write time, {floor}) (STT/SRAM write cycles {m['write_cycles']}/"
        f"{s['write_cycles']}, {src})",
        "cycle_ns": f"max(SRAM cycle time, {floor}) (STT/SRAM write cycles {m['write_cycles']}/"
        f"{s['write_cycles']}, {src})",
    }
    return {
        "stt-ram-paper": {
            "area": k_area,
            "leakage": k_leak,
            "read_energy": k_read,
            "write_energy": k_write,
            "latency": k_lat,
            "write_ns_min": write_ns,
            "node_nm": float(t["node_nm"]),
            "provenance": prov,
        }
    }


PAPER_CELL_FACTORS["stt"] = stt_cell_factors
