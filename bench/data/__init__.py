"""The development data as the benchmarks read it (`../shared/data` beside the repository, or
`--data`), and generators of labelled sets built from it."""
