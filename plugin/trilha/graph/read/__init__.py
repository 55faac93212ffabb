"""Reading the graph: seed 003's three retrievals (subgraph, shortest path, top-N documents),
their argument checks, result types, ranking, node selection and the TTL cache."""
