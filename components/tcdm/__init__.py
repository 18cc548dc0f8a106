"""Cluster TCDM (L1): 128 KiB of SRAM in 32 word-interleaved banks, with its initiator ports.

Ports (each a :class:`tlm.TargetSocket`; get them with ``tcdm.port(name)``):

=========  =====================  ======  ===============================================
name       attribute              width   branch
=========  =====================  ======  ===============================================
core0..15  ``core_ports[i]``      4 B     LIC (logarithmic interconnect)
dma0..     ``dma_ports[i]``       8 B     LIC (the cluster DMA, 64 bit/cycle)
soc        ``soc_port``           4 B     LIC (AXI from the cluster bus / SOC side)
rbe        ``rbe_port``           36 B    accelerator branch 0, the RBE's (9 contiguous words)
accel1..   ``accel_ports[i]``     32 B    further accelerator branches (``accel_ports`` - 1 of
                                          them, ``accel_port_bytes`` wide; e.g. FlexiSAGA's DecU)
=========  =====================  ======  ===============================================

A transaction on a port is a burst of consecutive words; a port issues one *access* per
cycle of ``width`` bytes (``width/4`` consecutive words: a 288-bit RBE row, two words on the
64-bit DMA port). The payload extension ``"tcdm.pattern"`` (a :class:`TcdmPattern`) turns a
transaction into rows (strided, or an explicit list of row addresses): each row starts a
new access and the data buffer holds the rows back to back. Byte enables are honoured.
Addresses may be local offsets ``[0, size)`` or global ``[base, base+size)``.

Two fidelity levels (``mode``):

* ``burst`` (fast): the data moves at once; a transaction takes
  ``latency + ceil(beats * conflict_factor)`` cycles of the cluster clock, ``beats`` =
  accesses it needs (``ceil(words/port_words)`` per row). Each port serialises its own
  transactions like a streaming hop (:class:`tlm.timing.HopTiming`): "latency adds up,
  occupancy takes the max" with the data cycles already spent upstream (``bw_occupancy``).
* ``word``: every bank serves one word per cycle. Per bank (HCI-like), a round-robin
  arbiter picks one LIC initiator (cores, DMA, SOC port), a second round-robin arbiter picks
  one accelerator branch (``rbe``, ``accel1`` ...; in index order after the last one granted
  at that bank), and a multiplexer between the two winners alternates whenever both
  request: the side not served last at that bank wins, so neither the cores nor
  the accelerators starve, and two accelerators streaming into the same banks share them
  half and half. The arbiter is event driven: it steps cycles only while requests are pending.
  A request issued at time ``t`` takes part from the first clock edge ``>= t``; a
  transaction completes ``(1 + latency)`` cycles after the edge at which its last word was
  granted. Data moves when the transaction is issued (at ``now + delay``), so a race-free
  program sees exactly the same memory contents as in burst mode.

One bank may be swapped for another storage (``Tcdm.bank_port``, word mode only: cosim.rtl
puts an RTL bank there). The TCDM array then stays a *mirror* of that bank: every path that
moves data (timed transactions at issue time, ``transport_dbg``, ``load``, ``clear``) first
does so on the array and then calls the port, which may replace the bank's bytes of a read
with its own; DMI is refused. ``None`` (the default) costs one attribute test per timed
transaction.

Statistics per port (``<port>.transactions``, ``.bytes``, ``.words``, ``.stall_cycles``:
cycles with an access not (fully) granted, ``.conflicts``: word requests denied) and
``conflict_cycles`` (bank-cycles with more than one requester), ``cycles`` (arbiter steps).

Modules: ``params`` (parameters, words, access patterns), ``tcdm`` (the storage, its ports
and the decoding both modes share), ``burst`` (the burst-mode port transport), ``word``
(the word-mode port transport and the per-bank arbiter) and ``host`` (what the two
transports use of the TCDM, as a typing Protocol: they build on nothing above them).
"""
from .params import PATTERN, WORD, TcdmParams, TcdmPattern
from .tcdm import Tcdm, TcdmPort

__all__ = ["TcdmParams", "Tcdm", "TcdmPort", "TcdmPattern", "PATTERN", "WORD"]
