"""Hybrid retrieval: the plan of a search (:mod:`~trilha.retrieve.plan`) and the pipeline that
runs it (:mod:`~trilha.retrieve.pipeline`)."""
