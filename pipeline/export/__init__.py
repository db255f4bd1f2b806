"""`gristmill export`: a finished run's token shards, or a materialised mix in its sample order,
in the file formats other trainers read (docs/formats.md)."""
