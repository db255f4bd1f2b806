"""`simhash_dedup`: near duplicates by 64-bit SimHash over MinHash's shingles."""
