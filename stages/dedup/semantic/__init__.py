"""`semantic_dedup`: semantic duplicates (the same content in other words, markup or template)
found by their embeddings, one kept per group, globally across sources and tasks.

Phases (files in `files.py`):

map      per task (`map.py`): each document's unit vector from the encoder
         (`stages/embed/encoder.py`), float16; its survivor key, source and excerpt; its sample
         order, a hash of its survivor key. A text without a letter or digit gets no vector: it
         is kept, in no cluster, counted (`no_content`) and in the report.
train    one task (`train.py`): the `sample` vectors of smallest sample order (the same sample
         for any `tasks`), spherical k-means on them (`kmeans.py`: faiss's, seeded).
assign   per map task: every vector to its most similar centroid.
pairs    per part (`cluster_tasks`; a cluster is in part `cluster % parts`): each cluster's
         documents in survivor order, greedy: removed when the cosine with a kept one reaches
         `threshold` (`pairs.py`); a cluster over `max_cluster` split first, and reported.
report   one task (`report.py`).
filter   per task: `cluster_id` (`c<k>`) on every document with a vector; `duplicate_of` and
         `duplicate_similarity` (cosine) on the removed ones, reason `semantic_duplicate`.

With `dedup_against`, the documents an earlier run kept a semantic duplicate of are dropped
in the pairwise pass first (`earlier.py`: the earlier runs' `embed` stores, their vectors
assigned to this run's centroids in assign), reason `in_earlier_run`.

The decisions are the same for any `tasks`, `workers`, `cluster_tasks` and executor: the
sample, the clusters' members and their order follow the documents' survivor keys, never
their task. The survivor is `stages/dedup/survivor.py`'s (real before synthetic, source order,
`prefer`, smallest id).
"""
