"""posenc benchmarks: ``make bench`` (``python -m bench``).

posenc and its peers are timed in one process, alternating, after warm-up; medians, ratios to
the fastest peer and to the floors, and the maximum error against float64 are reported and
written to docs/assets/bench.json, from which the performance page draws its table.
"""
