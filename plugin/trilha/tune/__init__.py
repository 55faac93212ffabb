"""Fit a workspace's fusion (weights, merge, RRF k, side depths) on training qrels."""
