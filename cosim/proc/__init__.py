"""Child processes and the msgpack channel to them, shared by the distribution layer
(:mod:`cosim.distributed`: the coordinator's workers) and the RTL bridge (:mod:`cosim.rtl`: one
simulator process per swapped block).

* :mod:`cosim.proc.supervisor` -- start a child in its own process group, watch it, end it
  with its parent, reap or kill it within a deadline;
* :mod:`cosim.proc.channel` -- msgpack framing and the ROUTER/DEALER pair a parent and one
  child talk over, every receive with a deadline.
* :mod:`cosim.proc.tmpdir` -- private temporary folders with an owner file; each new one
  first removes those whose owner was killed (-9) before it could.
"""
