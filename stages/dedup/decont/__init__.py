"""`decontaminate`: benchmark n-grams found in the corpus, and what to do with them."""
