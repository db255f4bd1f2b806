"""The embedding layer: a sentence-embedding model's unit vectors (`encoder.py`, the one module
that loads a model; the model layer of stages/models takes it over), the parameters `embed`
and `semantic_dedup` share (`params.py`), the vectors a run keeps (`store.py`), and the `embed`
stage (`stage.py`). Stages may import it, as they import formats."""
