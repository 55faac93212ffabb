"""The knowledge-graph boost (seed 001, stage 7): the stored per-chunk prior, the gate that
decides whether a boost can run, and the per-query score."""
