"""`classifier`: a model's score of each document (a Hugging Face classifier or regressor, or a
fastText model) written to `metadata[key]`; a threshold, when given, decides."""
