"""Near-duplicate dedup, the engine `minhash_dedup` and `simhash_dedup` share: candidates,
confirmed pairs, clusters and one survivor per cluster, globally across sources and tasks; and
the index a run keeps for later runs. A method is a `FuzzyMethod` (`method.py`) with its own
parameters (a `FuzzyParams`) and the hooks below; its stage is a `FuzzyDedup` (`stage.py`)
that names itself and its method, and every step, folder, count, reject and report of it is
named from that name (`Fuzzy`, `method.py`): two fuzzy stages in one run never mix. One file
a method: `stages/dedup/minhash/stage.py`, `stages/dedup/simhash/stage.py`.

Phases (the files they pass in `store.py`):

map      per task (`map.py`): shingles (`shingles.py`, the same language-aware words or
         letters for every method), a signature per document (hook `signatures`) and its
         candidate keys (hook `keys`), sorted per bucket at the end of the task. Against earlier
         runs, each document's keys are looked up in their indexes first (hooks `keys_at`,
         `stored`, `agree`).
bands    per bucket (`bands.py`): documents sharing a key are candidates (at most `max_bucket`
         a key); each is confirmed or not (hook `confirm`).
links    per part, roots and joins per part, labels (one task), clusters per part, report (one
         task): components of the confirmed pairs (`components.py`, `roots.py`), union-find
         with the merge guard (`cluster.py`), the survivor rule (`stages/dedup/survivor.py`),
         the report (`report.py`, `<work>/reports/<stage>.json`); the same for every method
         (`FuzzyDedup.reduce_steps`).
filter   per task (`filter.py`): `cluster_id`, `cluster_size` on every clustered document,
         `duplicate_of`, `duplicate_similarity` on the removed ones (reason `near_duplicate`);
         `in_earlier_run` for a document an earlier run kept (`stages/dedup/earlier.py`).
index    at the end of the run (`FuzzyDedup.write_index`): the kept documents' keys and
         signatures (`index.py`), made from the map's files with `stored` and `keys`.

The hooks, each called by the phase named (`FuzzyMethod` declares them abstract):

signatures(hashes, offsets)  map, each batch: the batch's signatures, one row a document,
                   from its shingle hashes (`offsets`: where each document's hashes start).
                   Its bytes are stored as `width` uint32 values a document.
keys(sigs)         map, each batch, and the index: uint64 (documents, keys) candidate keys;
                   two documents sharing one are a candidate pair.
stored(rows)       the index: `signatures`' rows again, from their uint32 values in the files.
keys_at(sigs, lsh)  map, against an earlier index whose key layout (`FuzzyParams.lsh`) is not
                   this run's: the keys in that layout, or a GristmillError if there are none.
agree(a, b)        map, against an earlier index: for row pairs of this run's signatures (as
                   `signatures` made them) and the index's (uint32 rows, as stored):
                   (confirmed: bool, score: larger is closer, value); `value` is recorded as
                   the method's `earlier_value` metadata key. The earlier texts are not kept:
                   signatures are all there is to confirm with.
confirm(store, pairs, stat_update)  bands, each chunk of candidates: their confirmed edges
                   (`EDGE` records with a similarity), read from the map's files (`store`);
                   `bands.confirmed_edges` does the exact Jaccard that both methods end with.
index_params(params)  what makes two runs' indexes comparable (not `lsh`, recorded apart).

A method's parameters (a `FuzzyParams`) add its own fields and say `width` (uint32 values a
stored signature), `lsh()` (the key layout, two counts, recorded in the index) and
`lsh_report()` (for the report). A method whose confirmed similarities are estimates
(`exact_pairs` false: MinHash's `confirm: estimate`) also gives `estimate(a, b)`.
"""
